package estimate

import (
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/estimate/models"
)

func TestLookupGPU(t *testing.T) {
	for in, want := range map[string]string{
		"H100-80GB": "H100-80GB", "NVIDIA H100 80GB HBM3": "H100-80GB", "NVIDIA H200": "H200",
		"NVIDIA A100-SXM4-40GB": "A100-40GB", "a10": "A10", "rtx 4090": "RTX-4090",
		"NVIDIA GeForce RTX 3090": "RTX-3090", "L4": "L4", "v100-32gb": "V100-32GB",
		// a board whose name begins with another's (H20, RTX-4070, RTX-3090)
		"NVIDIA H20": "H20", "NVIDIA H200 NVL": "H200", "H200-141GB": "H200", "rtx 4070": "RTX-4070",
		"NVIDIA GeForce RTX 4070 Ti": "RTX-4070Ti", "NVIDIA GeForce RTX 3090 Ti": "RTX-3090Ti",
		"NVIDIA GeForce RTX 4090 D": "RTX-4090D", "NVIDIA A800-SXM4-80GB": "A800-80GB", "NVIDIA A800 80GB PCIe": "A800-80GB",
		"NVIDIA GeForce RTX 2080 Ti": "RTX-2080Ti", "NVIDIA GeForce RTX 4080 SUPER": "RTX-4080-SUPER",
	} {
		g, err := LookupGPU(in)
		if err != nil || g.Name != want {
			t.Errorf("%q: got %q, %v; want %s", in, g.Name, err, want)
		}
	}
	if _, err := LookupGPU("A100"); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("A100: want ambiguous, got %v", err)
	}
	if _, err := LookupGPU("Voodoo5"); err == nil {
		t.Error("unknown GPU accepted")
	}
}

func preset(t *testing.T, name string) *models.Model {
	t.Helper()
	m, err := models.Preset(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestPlanMaxBatchAndLevers(t *testing.T) {
	md := preset(t, "gpt2")
	g, _ := LookupGPU("A100-40GB")
	r, f, err := Plan(md, Options{Batch: 64, Seq: 1024, Precision: "fp32"}, g, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if f.Fits || f.MaxBatch < 1 || f.MaxBatch >= 64 {
		t.Fatalf("batch 64 x 1024 fp32 gpt2 on 40GB: fits=%v max_batch=%d process=%d", f.Fits, f.MaxBatch, r.ProcessBytes)
	}
	// The largest batch fits and one more does not.
	at := func(b int) int64 {
		o := r.Opts
		o.Batch = b
		x, err := Estimate(md, o)
		if err != nil {
			t.Fatal(err)
		}
		return x.ProcessBytes
	}
	if at(f.MaxBatch) > f.BudgetBytes || at(f.MaxBatch+1) <= f.BudgetBytes {
		t.Fatalf("max_batch %d is not the boundary", f.MaxBatch)
	}
	if len(f.Levers) < 3 {
		t.Fatalf("levers: %+v", f.Levers)
	}
	for i := 1; i < len(f.Levers); i++ {
		if f.Levers[i].SavedBytes > f.Levers[i-1].SavedBytes {
			t.Fatalf("levers not ranked: %+v", f.Levers)
		}
	}
	names := map[string]bool{}
	for _, l := range f.Levers {
		names[l.Lever] = true
	}
	for _, want := range []string{"checkpointing", "amp", "half-batch-accum", "shorter-sequence"} {
		if !names[want] {
			t.Errorf("lever %s missing: %+v", want, f.Levers)
		}
	}
}

// Directions every estimate must respect, whatever the constants.
func TestMonotone(t *testing.T) {
	md := preset(t, "meta-llama/Llama-3.2-1B")
	base := Options{Batch: 4, Seq: 1024, Precision: "amp-bf16"}
	est := func(mod func(*Options)) *Result {
		o := base
		mod(&o)
		r, err := Estimate(md, o)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	b := est(func(*Options) {})
	cases := map[string]struct {
		r    *Result
		less bool
	}{
		"checkpointing": {est(func(o *Options) { o.Checkpointing = true }), true},
		"bigger batch":  {est(func(o *Options) { o.Batch = 8 }), false},
		"eager":         {est(func(o *Options) { o.Attention = "eager" }), false},
		"zero3":         {est(func(o *Options) { o.ZeroStage, o.WorldSize = 3, 8 }), true},
		"adamw-8bit":    {est(func(o *Options) { o.Optimizer = "adamw-8bit" }), true},
		"sgd":           {est(func(o *Options) { o.Optimizer = "sgd" }), true},
		"inference":     {est(func(o *Options) { o.Inference, o.Optimizer = true, "" }), true},
	}
	for name, c := range cases {
		if (c.r.PeakAllocatedBytes < b.PeakAllocatedBytes) != c.less {
			t.Errorf("%s: %d vs base %d", name, c.r.PeakAllocatedBytes, b.PeakAllocatedBytes)
		}
	}
	acc := est(func(o *Options) { o.Accum = 4 })
	if acc.PeakAllocatedBytes <= b.PeakAllocatedBytes {
		t.Errorf("accumulation keeps gradients alive across micro-steps: %d vs %d", acc.PeakAllocatedBytes, b.PeakAllocatedBytes)
	}
}

func TestGenerationAndOptimizerPeak(t *testing.T) {
	md := preset(t, "meta-llama/Llama-3.1-8B")
	r, err := Estimate(md, Options{Batch: 8, Seq: 2048, Precision: "bf16", Inference: true, GenLen: 2048})
	if err != nil {
		t.Fatal(err)
	}
	kv := int64(0)
	for _, it := range r.Breakdown {
		if it.Name == "kv_cache" {
			kv = it.Bytes
		}
	}
	// 2 (k, v) x 32 layers x 8 kv heads x 128 x 4096 tokens x 8 seqs x 2 bytes
	want := int64(2 * 32 * 8 * 128 * 4096 * 8 * 2)
	if kv < want || kv > want*11/10 {
		t.Errorf("kv cache at the peak %d, want about %d", kv, want)
	}
	// Full fine-tuning of 8B in bf16 with foreach AdamW peaks in the step:
	// weights, grads, two states and the sqrt temporary, 2 bytes each.
	r, err = Estimate(md, Options{Batch: 1, Seq: 512, Precision: "bf16", Checkpointing: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.PeakPhase, "optimizer step") || r.PeakAllocatedBytes < 10*r.Params {
		t.Errorf("peak %d at %s", r.PeakAllocatedBytes, r.PeakPhase)
	}
	f, err := Estimate(md, Options{Batch: 1, Seq: 512, Precision: "bf16", Checkpointing: true, OptimizerImpl: "fused"})
	if err != nil || f.PeakAllocatedBytes >= r.PeakAllocatedBytes-r.Params {
		t.Errorf("fused AdamW should drop the 2-byte/param temporary: %d vs %d (%v)", f.PeakAllocatedBytes, r.PeakAllocatedBytes, err)
	}
}

func TestBadOptions(t *testing.T) {
	md := preset(t, "gpt2")
	for _, o := range []Options{
		{Batch: 1}, // no --seq
		{Batch: 1, Seq: 8, Precision: "fp8"},
		{Batch: 1, Seq: 8, Optimizer: "lion"},
		{Batch: 1, Seq: 8, ZeroStage: 4},
		{Batch: -1, Seq: 8},
		{Batch: 1, Seq: 8, GenLen: 5},
	} {
		if _, err := Estimate(md, o); err == nil {
			t.Errorf("%+v: want an error", o)
		}
	}
	if _, err := Estimate(preset(t, "bert-base-uncased"), Options{Batch: 1, Seq: 8, Inference: true, KVCache: true}); err == nil {
		t.Error("kv cache on an encoder accepted")
	}
}

func TestHugeConfigurationsRefused(t *testing.T) {
	md := preset(t, "meta-llama/Llama-3.1-8B")
	if _, err := Estimate(md, Options{Batch: 1 << 20, Seq: 1 << 22}); err == nil {
		t.Fatal("an exabyte-sized tensor was estimated")
	}
	// MaxBatch stops at the size limit instead of overflowing, and Plan
	// says the figure is a lower bound (it once printed 65536 as "the
	// largest batch that fits" while 65537 fitted too).
	if n := MaxBatch(preset(t, "gpt2"), Options{Seq: 8, Precision: "bf16", Inference: true, Steps: 1}, 1<<62); n != MaxBatchLimit {
		t.Fatalf("max batch %d, want the limit %d", n, MaxBatchLimit)
	}
	_, f, err := Plan(preset(t, "gpt2"), Options{Batch: 1, Seq: 1, Precision: "bf16", Inference: true}, GPU{Name: "big", MemoryBytes: 1 << 50}, 0.05)
	if err != nil || !f.MaxBatchAtLimit || f.Levers == nil {
		t.Fatalf("err %v, at limit %v, levers %v (want [] not nil)", err, f.MaxBatchAtLimit, f.Levers)
	}
	g, _ := LookupGPU("A100-40GB")
	if _, f, _ := Plan(md, Options{Batch: 1, Seq: 4096, Precision: "bf16"}, g, 0.05); f.MaxBatchAtLimit {
		t.Fatalf("8B training on 40GB reported at the search limit: %+v", f)
	}
}

// TestDDPBuckets: DistributedDataParallel's reducer adds one copy of the
// gradients (its flat all-reduce buckets) to the step's peak, and
// gradient_as_bucket_view takes it away again.
func TestDDPBuckets(t *testing.T) {
	md := preset(t, "meta-llama/Llama-3.2-1B")
	base := Options{Batch: 1, Seq: 512, Precision: "bf16", Checkpointing: true}
	est := func(ddp, view bool) *Result {
		o := base
		o.DDP, o.DDPBucketView, o.WorldSize = ddp, view, 8
		r, err := Estimate(md, o)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	plain, ddp, view := est(false, false), est(true, false), est(true, true)
	grads := 2 * md.ParamCount() // bf16
	if d := ddp.PeakAllocatedBytes - plain.PeakAllocatedBytes; d < grads*95/100 || d > grads*105/100 {
		t.Errorf("DDP adds %d bytes to the peak, want about the gradients' %d", d, grads)
	}
	if d := view.PeakAllocatedBytes - plain.PeakAllocatedBytes; d < -grads/50 || d > grads/50 {
		t.Errorf("with gradient_as_bucket_view the peak moves by %d, want about 0 (gradients %d)", d, grads)
	}
}

// TestT5LossDtype: T5ForConditionalGeneration calls CrossEntropyLoss on its
// logits as they are, so pure bf16 keeps the loss tensors in bf16, while
// autocast runs log_softmax in fp32 (the same as ForCausalLMLoss's float()).
func TestT5LossDtype(t *testing.T) {
	md := preset(t, "t5-small")
	loss := func(precision string) int64 {
		r, err := Estimate(md, Options{Batch: 8, Seq: 512, Precision: precision})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range r.Breakdown {
			if it.Name == "logits_and_loss" {
				return it.Bytes
			}
		}
		t.Fatalf("%s: no logits_and_loss at the peak (%s)", precision, r.PeakPhase)
		return 0
	}
	bsv := int64(8 * 512 * md.Vocab)
	if got := loss("bf16"); got > 3*bsv*2+bsv/2 {
		t.Errorf("pure bf16: %d bytes of logits and loss at the peak, more than three bf16 b·s·V tensors (%d)", got, 3*bsv*2)
	}
	if got := loss("amp-bf16"); got < 2*bsv*4 {
		t.Errorf("autocast: %d bytes of logits and loss at the peak, want the fp32 log-probabilities and gradients (%d)", got, 2*bsv*4)
	}
}

// TestOOMInMarginOnly: a job whose process the whole GPU holds, but not
// the budget its margin leaves, is over the budget, not a CUDA
// out-of-memory error: the GPU 1% larger than the job is margin only, one
// 5% smaller is out of memory.
func TestOOMInMarginOnly(t *testing.T) {
	md, o := preset(t, "gpt2"), Options{Batch: 8, Seq: 1024}
	free, _, err := Plan(md, o, GPU{Name: "big", MemoryBytes: 1 << 40}, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		scale      float64
		marginOnly bool
	}{{1.01, true}, {0.95, false}} {
		gpu := GPU{Name: "near", MemoryBytes: int64(float64(free.ProcessBytes) * c.scale)}
		r, f, err := Plan(md, o, gpu, 0.05)
		if err != nil {
			t.Fatal(err)
		}
		if !r.OOM || f.Fits || f.OOMInMarginOnly != c.marginOnly {
			t.Errorf("GPU %.2f x the job: oom %v fits %v margin only %v, want oom, not fitting, margin only %v",
				c.scale, r.OOM, f.Fits, f.OOMInMarginOnly, c.marginOnly)
		}
	}
}
