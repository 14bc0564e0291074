package tracerun

import (
	"path/filepath"
	"testing"

	"github.com/torchmem/torchmem/internal/estimate"
)

// TestTraceLeversAgainstRetrace: a trace's what-if levers (the same events
// with what one change resizes resized, estimate.TraceLevers) against the
// trace of the program changed that way (testdata/gpt2.py, 4 layers of
// GPT-2 small's width, its 50,257-token vocabulary): half-batch-accum
// replayed from batch 8 against the batch-4 trace, and fused-optimizer
// from the foreach AdamW against AdamW(fused=True) where the torch has it
// (at a sequence short enough for the step to make the peak: where it does
// not, the lever saves nothing and is not offered).
// Each within 3% of the retrace's process figure.
func TestTraceLeversAgainstRetrace(t *testing.T) {
	py := torchPython(t)
	fit := func(batch, seq, impl string) (*estimate.TraceResult, *estimate.Fit) {
		return fitGPT2(t, py, batch, seq, impl)
	}
	_, base := fit("8", "256", "foreach")
	half, _ := fit("4", "256", "foreach")
	within(t, base.Levers, "half-batch-accum", half.ProcessBytes)
	if !hasFusedAdamW(py) {
		t.Log("this torch's AdamW has no fused option: fused-optimizer not compared")
		return
	}
	// a short sequence: the step's temporaries make the peak, which the
	// fused step does not have
	_, foreach := fit("1", "32", "foreach")
	fused, _ := fit("1", "32", "fused")
	within(t, foreach.Levers, "fused-optimizer", fused.ProcessBytes)
}

// fitGPT2 traces testdata/gpt2.py (4 layers of GPT-2 small) and fits it
// to an A10.
func fitGPT2(t *testing.T, py string, args ...string) (*estimate.TraceResult, *estimate.Fit) {
	t.Helper()
	gpu, err := estimate.LookupGPU("A10")
	if err != nil {
		t.Fatal(err)
	}
	argv := append([]string{filepath.Join("testdata", "gpt2.py"), "4", "768", "12", "50257"}, args...)
	r, f, err := estimate.FitTrace(trace(t, py, "meta", argv...), gpu, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	return r, f
}

// TestCheckpointLeverAgainstRetrace: the checkpoint lever (each block's
// saved activations freed at their last use in the forward and made
// again before the backward consumes them, estimate.TraceLevers) against
// the trace of the same script with each block under
// torch.utils.checkpoint (non-reentrant): in fp32 on this torch, and on
// torch 2.x with autocast's bf16 weight copies and SDPA attention, whose
// copies a checkpointed block drops at the forward's end and makes again.
// Within 3% of the retrace's process figure.
func TestCheckpointLeverAgainstRetrace(t *testing.T) {
	cases := []struct {
		name string
		py   func(*testing.T) string
		args []string
	}{
		{"fp32", torchPython, []string{"8", "256", "foreach", "fp32", "eager", "eager"}},
		{"amp-bf16-sdpa", torch2Python, []string{"8", "256", "foreach", "amp-bf16", "sdpa", "eager"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			py := c.py(t)
			_, base := fitGPT2(t, py, append(c.args, "plain")...)
			ckpt, _ := fitGPT2(t, py, append(c.args, "ckpt")...)
			within(t, base.Levers, "checkpoint", ckpt.ProcessBytes)
		})
	}
}

// within: the lever named is offered and its process figure is within 3%
// of want's.
func within(t *testing.T, levers []estimate.Lever, name string, want int64) {
	t.Helper()
	for _, l := range levers {
		if l.Lever != name {
			continue
		}
		d := float64(l.ProcessBytes-want) / float64(want)
		t.Logf("%s: what-if %d B, retraced %d B (%+.2f%%)", name, l.ProcessBytes, want, 100*d)
		if d < -0.03 || d > 0.03 {
			t.Errorf("%s: what-if %d B against the retrace's %d B: %+.2f%%", name, l.ProcessBytes, want, 100*d)
		}
		return
	}
	t.Errorf("no %s lever among %+v", name, levers)
}

// TestGradsToNoneLeverAgainstRetrace: the grads-to-none lever (each
// .grad freed at the step's end and the backward's new gradient kept in
// its place) from testdata/gpt2.py zeroing its gradients in place
// (zero_grad(set_to_none=False), torch 1.13's default) against the
// script setting them to None. The batch is small enough for the
// gradients held through the forward to make the peak. Within 3%.
func TestGradsToNoneLeverAgainstRetrace(t *testing.T) {
	py := torchPython(t)
	args := []string{"1", "128", "foreach", "fp32", "eager", "eager"}
	_, keep := fitGPT2(t, py, append(args, "keepgrads")...)
	none, f := fitGPT2(t, py, append(args, "plain")...)
	within(t, keep.Levers, "grads-to-none", none.ProcessBytes)
	for _, l := range f.Levers {
		if l.Lever == "grads-to-none" {
			t.Errorf("grads-to-none offered where the gradients are set to None: %+v", l)
		}
	}
}
