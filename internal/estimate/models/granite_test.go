package models

import (
	"strings"
	"testing"
)

// TestGraniteParamCounts: a Granite config parses to the Granite family
// with the model's real parameter count.
//   - testdata/granite-3.3-8b-instruct.json is ibm-granite/granite-3.3-8b-instruct's
//     config.json as a public dump of hub models printed it, next to the
//     parameter shapes transformers built from it: embed_tokens (49159, 4096),
//     per layer q/o (4096, 4096), k/v (1024, 4096), gate/up (12800, 4096),
//     down (4096, 12800), two norms (4096,); norm (4096,); lm_head tied.
//     Their sum is 8,170,864,640.
//   - ibm/PowerLM-3b (preset): the PowerLM paper's Table 4 (hidden 2304,
//     40 layers, 36 heads and KV heads of 64, MLP 9216, "3.5B"), vocabulary
//     49,152 tied: 3,510,819,072, the 3.51 B that fms-acceleration's
//     end-of-training allocation of its full fine-tuning implies
//     (bench/results/estimate-peft.md).
func TestGraniteParamCounts(t *testing.T) {
	m, err := LoadConfig("testdata/granite-3.3-8b-instruct.json")
	if err != nil {
		t.Fatal(err)
	}
	if m.Family != Granite || m.HeadDim != 128 || !m.Tied || m.KVHeads != 8 {
		t.Fatalf("granite-3.3-8b: family %q head_dim %d tied %v kv %d", m.Family, m.HeadDim, m.Tied, m.KVHeads)
	}
	const shapes = 49159*4096 + 40*(2*4096*4096+2*1024*4096+3*12800*4096+2*4096) + 4096
	if got := m.ParamCount(); got != shapes || shapes != 8_170_864_640 {
		t.Errorf("granite-3.3-8b: %d parameters, the shapes sum to %d", got, shapes)
	}
	p, err := Preset("PowerLM-3b")
	if err != nil {
		t.Fatal(err)
	}
	if p.Family != Granite || p.ParamCount() != 3_510_819_072 {
		t.Errorf("PowerLM-3b: family %q, %d parameters, want granite and 3,510,819,072", p.Family, p.ParamCount())
	}
}

// TestGraniteConfigKeys: what GraniteConfig / GraniteForCausalLM read
// differently from Llama: head_dim is hidden_size / num_attention_heads
// (a head_dim key is ignored), tie_word_embeddings defaults to false, and
// attention_bias puts a bias on o_proj too, mlp_bias on the three MLP
// projections.
func TestGraniteConfigKeys(t *testing.T) {
	base := `{"model_type": "granite", "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
		"num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 48, "head_dim": 32%s}`
	parse := func(extra string) *Model {
		m, err := ParseConfig(strings.NewReader(strings.Replace(base, "%s", extra, 1)))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	plain := parse("")
	if plain.HeadDim != 16 || plain.Tied {
		t.Errorf("head_dim %d (want 64/4 = 16), tied %v (want false)", plain.HeadDim, plain.Tied)
	}
	h, kv, I, L := int64(64), int64(2*16), int64(96), int64(2)
	want := plain.ParamCount() + L*(h+2*kv+h) + L*(2*I+h)
	if got := parse(`, "attention_bias": true, "mlp_bias": true`).ParamCount(); got != want {
		t.Errorf("with attention_bias and mlp_bias: %d parameters, want %d", got, want)
	}
	if got, w := parse(`, "tie_word_embeddings": true`).ParamCount(), plain.ParamCount()-48*64; got != w {
		t.Errorf("tied: %d parameters, want %d", got, w)
	}
}
