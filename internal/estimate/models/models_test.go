package models

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The expected counts are `sum(p.numel() for p in model.parameters())` as
// recorded in the calibration measurements (torch 2.11, transformers 5.17).
func TestParamCounts(t *testing.T) {
	cases := map[string]int64{
		"gpt2":              124439808,
		"gpt2-medium":       354823168,
		"bert-base-uncased": 109514298,
		"resnet50":          25557032,
		"vit_b_16":          86567656,
		"resnet18":          11689512,
		"vit_b_32":          88224232,
		"vit_l_16":          304326632,
		"Llama-3.1-8B":      8030261248,
	}
	for name, want := range cases {
		m, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.ParamCount(); got != want {
			t.Errorf("%s: %d params, want %d", name, got, want)
		}
	}
}

func TestLlamaSmallConfig(t *testing.T) {
	const c = `{"model_type":"llama","vocab_size":32000,"hidden_size":1024,"intermediate_size":2816,
	"num_hidden_layers":16,"num_attention_heads":16,"num_key_value_heads":4,"hidden_act":"silu",
	"tie_word_embeddings":false,"head_dim":64}`
	m, err := ParseConfig(strings.NewReader(c))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.ParamCount(); got != 245924864 {
		t.Errorf("llama-small: %d params, want 245924864", got)
	}
}

func TestUnknownArchitecture(t *testing.T) {
	_, err := ParseConfig(strings.NewReader(`{"model_type":"mamba","architectures":["MambaForCausalLM"]}`))
	if err == nil || !strings.Contains(err.Error(), `unsupported architecture: model_type "mamba"`) {
		t.Fatalf("want unsupported-architecture error, got %v", err)
	}
	for _, bad := range []string{`[]`, `{"model_type":"gpt2","n_embd":-5}`, `{"model_type":"llama","num_attention_heads":0}`, `not json`} {
		if _, err := ParseConfig(strings.NewReader(bad)); err == nil {
			t.Errorf("%s: want an error", bad)
		}
	}
}

func TestPresetNames(t *testing.T) {
	names := strings.Join(PresetNames(), " ")
	for _, want := range []string{"resnet152", "vit_l_16", "gpt2-large", "meta-llama/Llama-3.1-8B", "bert-base-uncased"} {
		if !strings.Contains(names, want) {
			t.Errorf("preset %s missing from %s", want, names)
		}
	}
	if _, err := Preset("no-such-model"); err == nil {
		t.Error("unknown preset accepted")
	}
}

func safetensorsFile(t testing.TB, header string) []byte {
	t.Helper()
	var b bytes.Buffer
	_ = binary.Write(&b, binary.LittleEndian, uint64(len(header)))
	b.WriteString(header)
	return b.Bytes()
}

func TestSafetensorsHeader(t *testing.T) {
	hdr := `{"__metadata__":{"format":"pt"},
	"model.embed_tokens.weight":{"dtype":"BF16","shape":[1000,64],"data_offsets":[0,128000]},
	"model.layers.0.self_attn.q_proj.weight":{"dtype":"BF16","shape":[64,64],"data_offsets":[0,1]},
	"model.layers.0.self_attn.k_proj.weight":{"dtype":"BF16","shape":[16,64],"data_offsets":[0,1]},
	"model.layers.0.mlp.gate_proj.weight":{"dtype":"BF16","shape":[256,64],"data_offsets":[0,1]},
	"model.layers.1.input_layernorm.weight":{"dtype":"F32","shape":[64],"data_offsets":[0,1]}}`
	h, err := ParseSafetensorsHeader(bytes.NewReader(safetensorsFile(t, hdr)))
	if err != nil {
		t.Fatal(err)
	}
	if h.Params != 64000+4096+1024+16384+64 || h.DominantDType() != "BF16" {
		t.Fatalf("params %d dtype %s", h.Params, h.DominantDType())
	}
	m, err := InferFromTensors(h)
	if err != nil {
		t.Fatal(err)
	}
	if m.Family != Llama || m.Layers != 2 || m.Hidden != 64 || m.Intermediate != 256 || !m.Tied {
		t.Fatalf("inferred %+v", m)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "model.safetensors")
	if err := os.WriteFile(p, safetensorsFile(t, hdr), 0o600); err != nil {
		t.Fatal(err)
	}
	idx := filepath.Join(dir, "model.safetensors.index.json")
	_ = os.WriteFile(idx, []byte(`{"metadata":{"total_size":1},"weight_map":{"a":"model.safetensors","b":"model.safetensors"}}`), 0o600)
	hi, err := ReadSafetensors(idx)
	if err != nil || hi.Params != h.Params {
		t.Fatalf("index: %v %v", hi, err)
	}
	_ = os.WriteFile(idx, []byte(`{"weight_map":{"a":"../etc/passwd"}}`), 0o600)
	if _, err := ReadSafetensors(idx); err == nil {
		t.Fatal("index escaping its directory accepted")
	}
}

func TestSafetensorsBadHeaders(t *testing.T) {
	bad := [][]byte{
		{1, 2, 3},
		safetensorsFile(t, `{"x":{"dtype":"Q9","shape":[1],"data_offsets":[0,1]}}`),
		safetensorsFile(t, `{"x":{"dtype":"F32","shape":[-1],"data_offsets":[0,1]}}`),
		safetensorsFile(t, `{"x":{"dtype":"F32","shape":[1099511627776,1099511627776]}}`),
		append([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0}, '{'),
	}
	for i, b := range bad {
		if _, err := ParseSafetensorsHeader(bytes.NewReader(b)); err == nil {
			t.Errorf("case %d: want error", i)
		}
	}
}

func FuzzParseConfig(f *testing.F) {
	for _, n := range PresetNames() {
		data, _ := presetFS.ReadFile("presets/" + strings.ReplaceAll(n, "/", "--") + ".json")
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseConfig(bytes.NewReader(data))
		if err == nil {
			_ = m.ParamCount()
		}
	})
}

func FuzzSafetensorsHeader(f *testing.F) {
	f.Add(safetensorsFile(f, `{"a":{"dtype":"BF16","shape":[2,3],"data_offsets":[0,12]}}`))
	f.Add(safetensorsFile(f, `{"__metadata__":{},"wte.weight":{"dtype":"F32","shape":[10,4]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ParseSafetensorsHeader(bytes.NewReader(data))
		if err == nil {
			_, _ = InferFromTensors(h)
		}
	})
}

func TestSequenceClassification(t *testing.T) {
	m, err := ParseConfig(strings.NewReader(`{"model_type":"bert","architectures":["BertForSequenceClassification"],
		"id2label":{"0":"neg","1":"pos","2":"neutral"}}`))
	if err != nil {
		t.Fatal(err)
	}
	// bert-base-uncased with a pooler and a 3-way classifier.
	if !m.SeqClassification || m.Classes != 3 || m.ParamCount() != 109484547 {
		t.Fatalf("classification %v, classes %d, params %d", m.SeqClassification, m.Classes, m.ParamCount())
	}
}

func FuzzParseIndex(f *testing.F) {
	f.Add([]byte(`{"metadata":{"total_size":1},"weight_map":{"a":"model-00001-of-00002.safetensors"}}`))
	f.Add([]byte(`{"weight_map":{"a":"../x"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		shards, err := parseIndex(data)
		for _, s := range shards {
			if err == nil && (strings.Contains(s, "/") || s == ".." || s == "") {
				t.Fatalf("shard %q escapes the directory", s)
			}
		}
	})
}

// A size of the wrong type is an error naming the field, not a silent
// fall back to the builder's default.
func TestConfigFieldTypes(t *testing.T) {
	for _, c := range []struct{ json, want string }{
		{`{"model_type": "llama", "hidden_size": "4096"}`, "hidden_size"},
		{`{"model_type": "gpt2", "n_layer": 12.5}`, "n_layer"},
		{`{"model_type": "bert", "vocab_size": -3}`, "vocab_size"},
		{`{"model_type": "t5", "d_model": [512]}`, "d_model"},
	} {
		if _, err := ParseConfig(strings.NewReader(c.json)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %s", c.json, err, c.want)
		}
	}
	if _, err := ParseConfig(strings.NewReader(`{"model_type": "llama", "head_dim": null, "hidden_size": 2048, "num_attention_heads": 16}`)); err != nil {
		t.Errorf("null head_dim refused: %v", err)
	}
}
