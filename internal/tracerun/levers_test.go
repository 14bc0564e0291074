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
	gpu, err := estimate.LookupGPU("A10")
	if err != nil {
		t.Fatal(err)
	}
	fit := func(batch, seq, impl string) (*estimate.TraceResult, *estimate.Fit) {
		tr := trace(t, py, "meta", filepath.Join("testdata", "gpt2.py"), "4", "768", "12", "50257", batch, seq, impl)
		r, f, err := estimate.FitTrace(tr, gpu, 0.05)
		if err != nil {
			t.Fatal(err)
		}
		return r, f
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
