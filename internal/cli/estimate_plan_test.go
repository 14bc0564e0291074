package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestEstimatePlanCLI: the plan, the effective batch and the unit of
// --gpu-memory in the text, the plan in the JSON, TP and MoE flags.
func TestEstimatePlanCLI(t *testing.T) {
	out, errs, code := runCLI(t, "estimate", "--model", "Llama-3.2-1B", "--batch", "16", "--accum", "2", "--seq", "2048",
		"--precision", "fp32", "--gpu-memory", "24GB")
	if code != 2 {
		t.Fatalf("code %d (want 2: does not fit as given): %s", code, errs)
	}
	for _, want := range []string{
		"batch 16 × accum 2 = 32 per optimizer step",
		"--gpu-memory 24GB is decimal (GB = 10^9 bytes): 24000000000 bytes = 22.35 GiB",
		"plan: combinations that fit, fastest first (same 32 samples per optimizer step):",
		"  1. time ",
		"--precision bf16",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "--world-size") {
		t.Errorf("a multi-GPU layout without --gpus:\n%s", out)
	}

	out, errs, code = runCLI(t, "estimate", "--model", "Mixtral-8x7B-v0.1", "--batch", "1", "--seq", "4096",
		"--precision", "bf16", "--checkpointing", "--tp", "8", "--sequence-parallel", "--gpus", "8",
		"--gpu-memory", "80GiB", "--plan", "--json")
	if code != 0 && code != 2 {
		t.Fatalf("code %d: %s", code, errs)
	}
	var j struct {
		Params       int64 `json:"params"`
		ActiveParams int64 `json:"active_params"`
		Options      struct {
			TP        int `json:"tp"`
			WorldSize int `json:"world_size"`
		} `json:"options"`
		Unit string `json:"gpu_memory_unit"`
		Plan *struct {
			Combinations []struct {
				Flags string  `json:"flags"`
				Cost  float64 `json:"cost"`
				GPUs  int     `json:"gpus"`
			} `json:"combinations"`
		} `json:"plan"`
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatal(err)
	}
	if j.Options.TP != 8 || j.Options.WorldSize != 8 || j.Unit != "binary" {
		t.Errorf("tp %d world %d unit %q", j.Options.TP, j.Options.WorldSize, j.Unit)
	}
	if j.ActiveParams == 0 || j.ActiveParams >= j.Params {
		t.Errorf("active %d of %d parameters", j.ActiveParams, j.Params)
	}
	if j.Plan == nil || len(j.Plan.Combinations) == 0 {
		t.Fatalf("--plan gave no plan: %s", out)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "gpt2", "--seq", "128", "--expert-capacity", "1.25"}, "mixture-of-experts"},
		{[]string{"--model", "gpt2", "--seq", "128", "--plan"}, "give --gpu or --gpu-memory"},
		{[]string{"--model", "gpt2", "--seq", "128", "--tp", "2", "--gpu", "H100-80GB"}, "--tp"},
		{[]string{"--model", "Llama-3.2-1B", "--seq", "128", "--gpus", "2", "--world-size", "4", "--gpu", "H100-80GB"}, "more than the 2 GPUs"},
	} {
		_, errs, code := runCLI(t, append([]string{"estimate"}, c.args...)...)
		if code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: code %d, stderr %q (want %q)", c.args, code, errs, c.want)
		}
	}
}
