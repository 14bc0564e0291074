package estimate

import "testing"

func TestModulePattern(t *testing.T) {
	for in, want := range map[string]string{
		"":                          "",
		"lm_head":                   "lm_head",
		"model.layers.3.self_attn":  "model.layers.N.self_attn",
		"module.blocks.10.attn.qkv": "module.blocks.N.attn.qkv",
		"layer1.0.downsample.0":     "layer1.N.downsample.N",
		"transformer.h.2x.mlp":      "transformer.h.2x.mlp",
	} {
		if got := modulePattern(in); got != want {
			t.Errorf("modulePattern(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMergeModules(t *testing.T) {
	for _, c := range []struct{ a, b, want string }{
		{"model.layers.N.mlp", "model.layers.N.mlp", "model.layers.N.mlp"},
		{"model.layers.N.self_attn.k_norm", "model.layers.N.input_layernorm", "model.layers.N.*"},
		{"model.layers.N.*", "model.layers.N", "model.layers.N.*"},
		{"model.layers.N.*", "model.norm", "model.*"},
		{"model.norm", "lm_head", ""},
		{"model.norm", "", ""},
		{"", "model.norm", ""},
	} {
		if got := mergeModules(c.a, c.b); got != c.want {
			t.Errorf("mergeModules(%q, %q) = %q, want %q", c.a, c.b, got, c.want)
		}
		if got := mergeModules(c.b, c.a); got != c.want {
			t.Errorf("mergeModules(%q, %q) = %q, want %q (the other order)", c.b, c.a, got, c.want)
		}
	}
}

// TestSiteModuleHoldsForAll: a site run by many modules names what holds
// for all of its blocks, whichever block the map gives first.
func TestSiteModuleHoldsForAll(t *testing.T) {
	tr := &Trace{Stacks: map[int][]string{0: {"model.py:60 forward"}}}
	held := map[int32]*block{}
	var cats []Category
	for i, m := range []string{"model.layers.0.self_attn.k_norm", "model.layers.0.input_layernorm",
		"model.layers.1.self_attn.q_norm", "model.layers.1.post_attention_layernorm"} {
		tr.Allocs = append(tr.Allocs, TraceAlloc{Op: "aten._to_copy.default", Module: m, Bytes: 512})
		held[int32(i)] = &block{size: 512}
		cats = append(cats, CatActivations)
	}
	for n := 0; n < 20; n++ { // map order varies from run to run
		s := tr.sites(held, cats)
		if len(s) != 1 || s[0].Module != "model.layers.N.*" || s[0].Bytes != 2048 {
			t.Fatalf("sites = %+v, want one of 2048 bytes in model.layers.N.*", s)
		}
	}
}
