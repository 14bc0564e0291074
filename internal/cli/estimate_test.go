package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEstimateJSON(t *testing.T) {
	out, errs, code := runCLI(t, "estimate", "--model", "gpt2", "--batch", "8", "--seq", "512",
		"--precision", "amp-bf16", "--gpu", "H100-80GB", "--json")
	if code != 0 {
		t.Fatalf("code %d, stderr %s", code, errs)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, k := range []string{"peak_allocated_bytes", "peak_reserved_bytes", "process_bytes", "breakdown",
		"peak_phase", "max_batch", "levers", "fits", "gpu_memory_bytes"} {
		if _, ok := v[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	pa, pr, pp := v["peak_allocated_bytes"].(float64), v["peak_reserved_bytes"].(float64), v["process_bytes"].(float64)
	if !(pa > 5e9 && pa <= pr && pr < pp) {
		t.Errorf("allocated %v, reserved %v, process %v", pa, pr, pp)
	}
}

func TestEstimateTextAndExitCodes(t *testing.T) {
	out, _, code := runCLI(t, "estimate", "--model", "resnet50", "--batch", "64", "--optimizer", "sgd-momentum", "--gpu-memory", "24GiB")
	if code != 0 || !strings.Contains(out, "largest batch that fits") || !strings.Contains(out, "breakdown at the peak") {
		t.Fatalf("code %d\n%s", code, out)
	}
	out, _, code = runCLI(t, "estimate", "--model", "gpt2-large", "--batch", "32", "--seq", "1024", "--gpu", "T4")
	if code != 2 || !strings.Contains(out, "DOES NOT FIT") || !strings.Contains(out, "levers") {
		t.Fatalf("a job that does not fit: code %d\n%s", code, out)
	}
	out, _, code = runCLI(t, "estimate", "--model", "gpt2", "--seq", "896", "--inference", "--gen-len", "128", "--precision", "bf16")
	if code != 0 || !strings.Contains(out, "kv cache") {
		t.Fatalf("generation: code %d\n%s", code, out)
	}
}

func TestEstimateInputs(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	_ = os.WriteFile(cfg, []byte(`{"model_type":"llama","hidden_size":512,"intermediate_size":1376,"num_hidden_layers":4,
		"num_attention_heads":8,"num_key_value_heads":2,"vocab_size":32000}`), 0o600)
	out, errs, code := runCLI(t, "estimate", "--config", cfg, "--seq", "256", "--checkpointing", "--json")
	if code != 0 || !strings.Contains(out, `"checkpointing": true`) {
		t.Fatalf("--config: code %d %s\n%s", code, errs, out)
	}
	bad := filepath.Join(dir, "bad.json")
	_ = os.WriteFile(bad, []byte(`{"model_type":"mamba"}`), 0o600)
	for _, args := range [][]string{
		{"estimate", "--config", bad, "--seq", "8"},
		{"estimate", "--seq", "8"},
		{"estimate", "--model", "gpt2", "--config", cfg, "--seq", "8"},
		{"estimate", "--model", "gpt2", "--seq", "8", "--gpu", "A100"},
		{"estimate", "--model", "gpt2", "--seq", "8", "--checkpointing=some"},
		{"estimate", "--model", "gpt2", "--seq", "8", "--fsdp", "--zero", "2"},
		{"estimate", "--safetensors", filepath.Join(dir, "missing.safetensors"), "--seq", "8"},
	} {
		if _, errs, code := runCLI(t, args...); code != 1 || !strings.HasPrefix(errs, "torchmem: ") {
			t.Errorf("%v: code %d, stderr %q", args, code, errs)
		}
	}
	_, errs, _ = runCLI(t, "estimate", "--config", bad, "--seq", "8")
	if !strings.Contains(errs, "unsupported architecture") {
		t.Errorf("unknown architecture message: %q", errs)
	}
}

func TestEstimateGPUAutoWithoutGPU(t *testing.T) {
	t.Setenv("TORCHMEM_SYS_ROOT", t.TempDir())
	t.Setenv("PATH", t.TempDir()) // no nvidia-smi
	_, errs, code := runCLI(t, "estimate", "--model", "gpt2", "--seq", "128", "--gpu", "auto")
	if code != 1 || !strings.Contains(errs, "no GPU detected") {
		t.Fatalf("code %d, stderr %q", code, errs)
	}
}

func TestEstimateLists(t *testing.T) {
	out, _, code := runCLI(t, "estimate", "--list-models", "--list-gpus")
	if code != 0 || !strings.Contains(out, "vit_l_16") || !strings.Contains(out, "H100-80GB") {
		t.Fatalf("code %d\n%s", code, out)
	}
}

func TestEstimateSafetensors(t *testing.T) {
	dir := t.TempDir()
	hdr := `{"__metadata__":{"format":"pt"},` +
		`"model.embed_tokens.weight":{"dtype":"BF16","shape":[32000,512],"data_offsets":[0,0]},` +
		`"model.layers.0.self_attn.q_proj.weight":{"dtype":"BF16","shape":[512,512],"data_offsets":[0,0]},` +
		`"model.layers.0.self_attn.k_proj.weight":{"dtype":"BF16","shape":[128,512],"data_offsets":[0,0]},` +
		`"model.layers.0.mlp.gate_proj.weight":{"dtype":"BF16","shape":[1376,512],"data_offsets":[0,0]},` +
		`"model.layers.1.mlp.gate_proj.weight":{"dtype":"BF16","shape":[1376,512],"data_offsets":[0,0]}}`
	n := len(hdr)
	buf := []byte{byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24), 0, 0, 0, 0}
	p := filepath.Join(dir, "model.safetensors")
	if err := os.WriteFile(p, append(buf, hdr...), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errs, code := runCLI(t, "estimate", "--safetensors", p, "--seq", "256", "--precision", "bf16", "--json")
	if code != 0 {
		t.Fatalf("code %d: %s", code, errs)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	want := 32000*512 + 512*512 + 128*512 + 2*1376*512
	if got := v["params"].(float64); int(got) != want {
		t.Errorf("params %v, header says %d", got, want)
	}
}

func TestEstimateClassificationHead(t *testing.T) {
	lm, _, code := runCLI(t, "estimate", "--model", "bert-base-uncased", "--batch", "32", "--seq", "128", "--json")
	cls, _, code2 := runCLI(t, "estimate", "--model", "bert-base-uncased", "--batch", "32", "--seq", "128", "--head", "classification", "--json")
	if code != 0 || code2 != 0 {
		t.Fatalf("codes %d %d", code, code2)
	}
	var a, b map[string]any
	_ = json.Unmarshal([]byte(lm), &a)
	_ = json.Unmarshal([]byte(cls), &b)
	// The masked-LM head's b·s·V logits and loss gradients are gone.
	if b["peak_allocated_bytes"].(float64) > a["peak_allocated_bytes"].(float64)-1e9 {
		t.Errorf("classification %v vs masked LM %v", b["peak_allocated_bytes"], a["peak_allocated_bytes"])
	}
	if _, _, code := runCLI(t, "estimate", "--model", "resnet50", "--head", "classification"); code != 1 {
		t.Errorf("--head on a ResNet: code %d", code)
	}
}

// TestEstimateGolden compares the JSON of a fixed configuration with
// testdata/estimate/gpt2.json; TORCHMEM_UPDATE_ESTIMATE=1 rewrites it after
// a deliberate change to the model.
func TestEstimateGolden(t *testing.T) {
	out, errs, code := runCLI(t, "estimate", "--model", "gpt2", "--batch", "8", "--seq", "512",
		"--precision", "amp-bf16", "--gpu", "A100-40GB", "--json")
	if code != 0 {
		t.Fatalf("code %d: %s", code, errs)
	}
	golden := filepath.Join("testdata", "estimate", "gpt2.json")
	if os.Getenv("TORCHMEM_UPDATE_ESTIMATE") == "1" {
		if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Errorf("estimate JSON differs from %s (TORCHMEM_UPDATE_ESTIMATE=1 to accept):\n%s", golden, out)
	}
}

// Flags the estimate used to ignore or quietly replace are refused.
func TestEstimateRefusesIgnoredFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "gpt2", "--seq", "128", "--batch", "0"}, "--batch 0"},
		{[]string{"--model", "gpt2", "--seq", "128", "--accum", "0"}, "--accum 0"},
		{[]string{"--model", "gpt2", "--seq", "128", "--zero", "3", "--world-size", "0"}, "--world-size 0"},
		{[]string{"--model", "gpt2", "--seq", "128", "--kv-cache"}, "--kv-cache needs --inference"},
		{[]string{"--model", "resnet50", "--seq", "128"}, "--image-size"},
		{[]string{"--model", "gpt2", "--seq", "128", "--image-size", "224"}, "--seq"},
		{[]string{"--model", "gpt2", "--seq", "4096"}, "1024 positions"},
		{[]string{"--model", "gpt2", "--seq", "1000", "--inference", "--gen-len", "100"}, "1024 positions"},
	} {
		_, errOut, code := runCLI(t, append([]string{"estimate"}, c.args...)...)
		if code != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: code %d, stderr %q, want it to mention %q", c.args, code, errOut, c.want)
		}
	}
	out, _, code := runCLI(t, "estimate", "--model", "resnet50", "--batch", "8")
	if code != 0 || strings.Contains(out, "attention") {
		t.Errorf("resnet50: code %d, a ConvNet with an attention implementation:\n%s", code, out)
	}
}

// The text report fits 80 columns, levers and a job that does not fit included.
func TestEstimateTextFits80Columns(t *testing.T) {
	out, _, code := runCLI(t, "estimate", "--model", "meta-llama/Llama-3.1-8B", "--seq", "2048", "--gpu", "A100-80GB")
	if code != 2 || !strings.Contains(out, "levers") || !strings.Contains(out, "peak at") {
		t.Fatalf("code %d\n%s", code, out)
	}
	for _, l := range strings.Split(out, "\n") {
		if n := len([]rune(l)); n > 80 {
			t.Errorf("%d columns: %q", n, l)
		}
	}
}
