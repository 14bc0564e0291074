package tracerun

import (
	"path/filepath"
	"testing"

	"github.com/torchmem/torchmem/internal/estimate"
	"github.com/torchmem/torchmem/internal/estimate/models"
)

// TestTraceAgreesWithBuiltinGPT2AMP: testdata/gpt2.py with its forward and
// loss under torch.autocast("cuda", bfloat16), traced on meta (where the
// tracer does autocast's casts, torch's own doing nothing there), and the
// built-in estimator's amp-bf16 walk of the same config agree within 2% on
// the peak allocated; and the AMP trace is below the fp32 one, as the
// half-precision activations make it.
func TestTraceAgreesWithBuiltinGPT2AMP(t *testing.T) {
	py := torchPython(t)
	script := filepath.Join("testdata", "gpt2.py")
	tr := trace(t, py, "meta", script, "2", "128", "4", "1000", "8", "128", "foreach", "amp-bf16")
	got := estimate.ReplayTrace(tr, estimate.TraceReplay{ComputeCapability: 90})
	fp32 := estimate.ReplayTrace(trace(t, py, "meta", script, "2", "128", "4", "1000", "8", "128", "foreach"),
		estimate.TraceReplay{ComputeCapability: 90})
	md, err := models.FromConfigMap(map[string]any{"model_type": "gpt2", "architectures": []any{"GPT2LMHeadModel"},
		"vocab_size": 1000.0, "n_positions": 128.0, "n_embd": 128.0, "n_layer": 2.0, "n_head": 4.0,
		"activation_function": "gelu_new", "resid_pdrop": 0.1, "embd_pdrop": 0.1, "attn_pdrop": 0.1})
	if err != nil {
		t.Fatal(err)
	}
	want, err := estimate.Estimate(md, estimate.Options{Batch: 8, Seq: 128, Precision: "amp-bf16", Optimizer: "adamw",
		OptimizerImpl: "foreach", Attention: "eager", ComputeCapability: 90})
	if err != nil {
		t.Fatal(err)
	}
	diff := float64(got.PeakAllocatedBytes-want.PeakAllocatedBytes) / float64(want.PeakAllocatedBytes)
	t.Logf("amp-bf16 peak allocated: trace %d B (%s), built-in %d B (%s): %+.2f%%; fp32 trace %d B",
		got.PeakAllocatedBytes, got.PeakPhase, want.PeakAllocatedBytes, want.PeakPhase, 100*diff, fp32.PeakAllocatedBytes)
	if diff < -0.02 || diff > 0.02 {
		t.Errorf("trace and built-in disagree by %+.2f%% on the amp-bf16 peak allocated", 100*diff)
	}
	if got.PeakAllocatedBytes >= fp32.PeakAllocatedBytes {
		t.Errorf("amp-bf16 trace %d B, fp32 trace %d B: autocast made nothing smaller", got.PeakAllocatedBytes, fp32.PeakAllocatedBytes)
	}
}
