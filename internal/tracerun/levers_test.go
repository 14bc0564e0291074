package tracerun

import (
	"context"
	"path/filepath"
	"strings"
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

// TestAmpLeverAgainstOwnAutocast: the amp lever's retrace (the program
// traced again with its forward and loss under CUDA autocast, opened and
// closed by the hook) against the same script running the AMP recipe
// itself. testdata/gpt2.py in fp32 against its own bf16 autocast (torch
// 1.13 eager attention; torch 2.x SDPA), and testdata/amp_regions.py,
// whose frozen encoder runs under no_grad (the hook's region ends with
// its forward, the recipe's with its own `with` block) before the
// trainable head and the loss; and the same script under its own regions
// asking for float32 (nanoGPT's --dtype=float32), whose dtype the hook
// sets to bf16 instead; and with the head's forward and backward in the
// closure optimizer.step calls (Lightning's automatic optimization). The
// retrace allocates what the script's
// own autocast does, and the lever's figure is within 3% of its process
// figure (equal, where the two are).
func TestAmpLeverAgainstOwnAutocast(t *testing.T) {
	gpt2 := func(prec, attn string) []string {
		return []string{filepath.Join("testdata", "gpt2.py"), "4", "768", "12", "50257", "8", "256", "foreach", prec, attn, "eager", "plain"}
	}
	regions := func(mode string) []string { return []string{filepath.Join("testdata", "amp_regions.py"), mode} }
	cases := []struct {
		name      string
		py        func(*testing.T) string
		fp32, own []string
	}{
		{"gpt2-eager", torchPython, gpt2("fp32", "eager"), gpt2("amp-bf16", "eager")},
		{"gpt2-sdpa", torch2Python, gpt2("fp32", "sdpa"), gpt2("amp-bf16", "sdpa")},
		{"frozen-encoder", torchPython, regions("plain"), regions("own")},
		{"float32-region", torch2Python, regions("f32region"), regions("own")},
		{"closure", torchPython, regions("closure"), regions("closure-own")},
	}
	gpu, err := estimate.LookupGPU("A10")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			py := c.py(t)
			base := trace(t, py, "meta", c.fp32...)
			dtype := estimate.AutocastRetrace(base, gpu.ComputeCapability)
			if dtype != "bfloat16" {
				t.Fatalf("AutocastRetrace of the fp32 trace: %q, want bfloat16", dtype)
			}
			forced := retrace(t, py, dtype, c.fp32...)
			own := trace(t, py, "meta", c.own...)
			if got, want := allocations(forced), allocations(own); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("the retrace allocates %d storages, the script's autocast %d; first difference: %s", len(got), len(want), firstDiff(got, want))
			}
			ownFit, _, err := estimate.FitTrace(own, gpu, 0.05)
			if err != nil {
				t.Fatal(err)
			}
			_, f, err := estimate.FitTrace(base, gpu, 0.05, estimate.AmpRetrace(dtype, forced))
			if err != nil {
				t.Fatal(err)
			}
			within(t, f.Levers, "amp-bf16", ownFit.ProcessBytes)
		})
	}
}

// TestAmpLeverFailure: testdata/amp_regions.py adding its experts' bf16
// outputs into a float32 buffer with index_add_ runs in float32 and fails
// under autocast, as on a GPU: no amp lever, and the failure says the op.
// On torch 1.13 and 2.x (whose meta index_add_ takes the bf16 source: the
// tracer raises as the device's kernel does).
func TestAmpLeverFailure(t *testing.T) {
	for name, python := range map[string]func(*testing.T) string{"torch": torchPython, "torch2": torch2Python} {
		t.Run(name, func(t *testing.T) {
			py := python(t)
			args := []string{filepath.Join("testdata", "amp_regions.py"), "indexadd"}
			base := trace(t, py, "meta", args...)
			gpu, err := estimate.LookupGPU("A10")
			if err != nil {
				t.Fatal(err)
			}
			_, f, err := estimate.FitTrace(base, gpu, 0.05, estimate.AmpRetrace("bfloat16", retrace(t, py, "bfloat16", args...)))
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range f.Levers {
				if l.Retraced {
					t.Errorf("a lever from the failed retrace: %+v", l)
				}
			}
			if n := f.RetracesNotOffered; len(n) != 1 || n[0].End == nil || !strings.Contains(n[0].End.Op, "index_add_") {
				t.Errorf("retraces not offered %+v, want index_add_'s failure", n)
			}
		})
	}
}

// retrace traces args under CUDA autocast in dtype, as the amp lever does;
// it may end where the program failed.
func retrace(t *testing.T, py, dtype string, args ...string) *estimate.Trace {
	t.Helper()
	var out strings.Builder
	tr, err := Run(context.Background(), Options{Argv: append([]string{py}, args...), Autocast: dtype, Output: &out})
	if err != nil {
		t.Fatalf("%v under autocast %s: %v\n%s", args, dtype, err, out.String())
	}
	if tr.Header["autocast"] != dtype {
		t.Fatalf("%v: the trace's header says autocast=%q, want %s", args, tr.Header["autocast"], dtype)
	}
	return tr
}

// firstDiff: the first entry of two sorted lists that differs.
func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return a[i] + " against " + b[i]
		}
	}
	return "one is longer"
}

// TestTracePlanAgainstRetrace: levers combined as the plan combines them
// (estimate.TraceCombined), on the trace of testdata/gpt2.py in fp32 with
// the foreach AdamW at batch 8 (the amp lever's retrace a base of its
// own), against the script with the same changes made by its own
// switches: autocast and checkpointing, autocast at batch 4,
// checkpointing with the fused AdamW (torch >= 2.0). Each within 3% of
// the retrace's process figure.
func TestTracePlanAgainstRetrace(t *testing.T) {
	py := torch2Python(t)
	gpt2 := func(batch, opt, prec, ckpt string) []string {
		return []string{filepath.Join("testdata", "gpt2.py"), "4", "768", "12", "50257", batch, "256", opt, prec, "eager", "eager", ckpt}
	}
	gpu, err := estimate.LookupGPU("A10")
	if err != nil {
		t.Fatal(err)
	}
	base := trace(t, py, "meta", gpt2("8", "foreach", "fp32", "plain")...)
	amp := []estimate.Retrace{estimate.AmpRetrace("bfloat16", retrace(t, py, "bfloat16", gpt2("8", "foreach", "fp32", "plain")...))}
	cases := []struct {
		levers []string
		script []string
	}{
		{[]string{"amp-bf16", "checkpoint"}, gpt2("8", "foreach", "amp-bf16", "ckpt")},
		{[]string{"amp-bf16", "half-batch-accum"}, gpt2("4", "foreach", "amp-bf16", "plain")},
		{[]string{"checkpoint", "fused-optimizer"}, gpt2("8", "fused", "fp32", "ckpt")},
	}
	for _, c := range cases {
		got, err := estimate.TraceCombined(base, gpu, 0.05, amp, c.levers...)
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := estimate.FitTrace(trace(t, py, "meta", c.script...), gpu, 0.05)
		if err != nil {
			t.Fatal(err)
		}
		d := float64(got.ProcessBytes-want.ProcessBytes) / float64(want.ProcessBytes)
		t.Logf("%v: combined %d B, retraced %d B (%+.2f%%), cost %.2f", c.levers, got.ProcessBytes, want.ProcessBytes, 100*d, got.Cost)
		if d < -0.03 || d > 0.03 {
			t.Errorf("%v: combined %d B against the retrace's %d B: %+.2f%%", c.levers, got.ProcessBytes, want.ProcessBytes, 100*d)
		}
	}
}
