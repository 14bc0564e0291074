package estimate

import (
	"strings"
	"testing"
)

// TestPlanFindsCombinations: a job that no single lever rescues gets
// combinations that fit, each verified by its own estimate, cheapest
// first, with the same effective batch.
func TestPlanFindsCombinations(t *testing.T) {
	md := preset(t, "meta-llama/Llama-3.2-1B")
	base := Options{Batch: 16, Accum: 2, Seq: 2048, Precision: "fp32"}
	budget := int64(24e9)
	ps, err := Search(md, base, budget, PlanRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ps.Combinations) == 0 {
		t.Fatal("no combination fits")
	}
	if ps.EffectiveBatch != 32 {
		t.Errorf("effective batch %d, want 32", ps.EffectiveBatch)
	}
	prev := 0.0
	for _, c := range ps.Combinations {
		t.Logf("%-70s cost %.2f  process %.2f GB", c.Flags, c.Cost, gb(c.ProcessBytes))
		o := c.Settings
		if o.Batch*o.Accum*o.dataParallel() != 32 {
			t.Errorf("%s: batch %d x accum %d is not the effective 32", c.Flags, o.Batch, o.Accum)
		}
		_, f, err := Plan(md, o, GPU{Name: "x", MemoryBytes: budget}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !f.Fits {
			t.Errorf("%s: the plan says it fits, the fit check does not (%v)", c.Flags, f.Notes)
		}
		if c.Cost < prev {
			t.Errorf("not sorted by cost: %.3f after %.3f", c.Cost, prev)
		}
		prev = c.Cost
		if o.WorldSize > 1 || o.ZeroStage > 0 || o.TP > 1 {
			t.Errorf("%s: a multi-GPU layout without --gpus", c.Flags)
		}
	}
	if ps.Estimated > 60 {
		t.Errorf("%d estimates: the search should prune", ps.Estimated)
	}
}

// TestPlanMultiGPUOnlyWhenStated: with --gpus 8 layouts over 8 GPUs are
// searched, and each fits per GPU.
func TestPlanMultiGPUOnlyWhenStated(t *testing.T) {
	md := preset(t, "meta-llama/Llama-3.1-8B")
	base := Options{Batch: 8, Seq: 4096, Precision: "bf16"}
	budget := int64(76e9)
	ps, err := Search(md, base, budget, PlanRequest{GPUs: 8})
	if err != nil {
		t.Fatal(err)
	}
	multi := false
	for _, c := range ps.Combinations {
		t.Logf("%-70s cost %.3f  process %.2f GB", c.Flags, c.Cost, gb(c.ProcessBytes))
		if c.GPUs == 8 && strings.Contains(c.Flags, "--world-size 8") {
			multi = true
		}
	}
	if !multi {
		t.Error("8 stated GPUs and no layout uses them")
	}
}

// TestPlanCostModel pins the stated cost model.
func TestPlanCostModel(t *testing.T) {
	md := preset(t, "gpt2")
	o := Options{Batch: 8, Accum: 1, Seq: 1024, Precision: "bf16"}
	base := stepCost(md, o)
	ck := o
	ck.Checkpointing = true
	if r := stepCost(md, ck) / base; r < 1.33 || r > 1.34 {
		t.Errorf("checkpointing costs %.3f, want 4/3 (one more forward)", r)
	}
	acc := o
	acc.Batch, acc.Accum = 1, 8
	want := (8*1024.0 + 8*microStepTokens) / (8*1024 + microStepTokens)
	if r := stepCost(md, acc) / base; r < want-1e-9 || r > want+1e-9 {
		t.Errorf("8 micro-steps of 1 cost %.3f, want %.3f", r, want)
	}
	lora := o
	lora.PEFT.Method = "lora"
	if r := stepCost(md, lora) / base; r < 0.66 || r > 0.67 {
		t.Errorf("LoRA costs %.3f, want 2/3 (no weight gradients)", r)
	}
}

// TestPlanInferenceTP: a model that does not fit one GPU for inference is
// split by TP over the stated GPUs.
func TestPlanInferenceTP(t *testing.T) {
	md := preset(t, "meta-llama/Llama-3.1-70B")
	base := Options{Batch: 1, Seq: 4096, Precision: "bf16", Inference: true, NoLoadFP32: true}
	ps, err := Search(md, base, int64(76e9), PlanRequest{GPUs: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(ps.Combinations) == 0 || ps.Combinations[0].Settings.TP < 2 {
		t.Fatalf("no TP layout for 70B inference on 4 GPUs: %+v", ps.Combinations)
	}
	for _, c := range ps.Combinations {
		t.Logf("%-40s cost %.2f process %.1f GB", c.Flags, c.Cost, gb(c.ProcessBytes))
	}
}
