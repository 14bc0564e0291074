package estimate

import (
	"strconv"
	"strings"
	"testing"
)

// ampTrace: one step of a float32 program whose forward makes 256 MiB of
// activations (fwdBytes), twice the threshold of a retrace.
func ampTrace(header, fwdKind, fwdDType string, fwdBytes int64) string {
	return "torchmem-trace\t1\t" + header + "\ttorch=2.6.0\tsteps=1\n" +
		"S\t1\ttrain.py:10:<module>\n" +
		"A\t1\t4194304\tother\tsetup\t1\t1\t\taten._to_copy.default\tfloat32\t1024,1024\n" +
		"C\t1\tparam\n" +
		"P\tforward\t1\n" +
		"A\t2\t" + strconv.FormatInt(fwdBytes, 10) + "\t" + fwdKind + "\tforward\t1\t1\tfc\taten.mm.default\t" + fwdDType + "\t65536,1024\n" +
		"P\tbackward\t1\n" +
		"A\t3\t4194304\tbwd\tbackward\t1\t1\t\taten.mm.default\tfloat32\t1024,1024\n" +
		"F\t2\n" +
		"C\t3\tgrad\n" +
		"P\toptimizer\t1\n" +
		"P\tafter_step\t2\n" +
		"E\tsteps\t\t1\t1 optimizer steps traced\n"
}

// TestAutocastRetrace: a meta trace of a float32 forward that makes twice
// the lever's threshold is traced again, in bf16 from sm80 (and where
// the GPU is not said: the tracer's sm90) and in fp16 before; not a
// retrace, a cpu trace, one that stopped short, a program with autocast's
// weight copies (its own autocast), a bf16 forward or a small one.
func TestAutocastRetrace(t *testing.T) {
	const big = 2 * minTraceLeverSaving
	withCopy := strings.Replace(ampTrace("device=meta", "fwd", "float32", big), "P\tbackward",
		"A\t9\t2097152\tautocast\tforward\t1\t1\tfc\taten._to_copy.default\tbfloat16\t1024,1024\nP\tbackward", 1)
	cases := []struct {
		name, text string
		cc         int
		want       string
	}{
		{"fp32 on an H100", ampTrace("device=meta", "fwd", "float32", big), 90, "bfloat16"},
		{"fp32, no GPU said", ampTrace("device=meta", "fwd", "float32", big), 0, "bfloat16"},
		{"fp32 on an A10", ampTrace("device=meta", "fwd", "float32", big), 86, "bfloat16"},
		{"fp32 on a V100", ampTrace("device=meta", "fwd", "float32", big), 70, "float16"},
		{"fp32 on a T4", ampTrace("device=meta", "fwd", "float32", big), 75, "float16"},
		{"a retrace", ampTrace("device=meta\tautocast=bfloat16", "fwd", "float32", big), 90, ""},
		{"cpu tensors", ampTrace("device=cpu", "fwd", "float32", big), 90, ""},
		{"its own autocast", withCopy, 90, ""},
		{"a bf16 forward", ampTrace("device=meta", "fwd", "bfloat16", big), 90, ""},
		{"a small forward", ampTrace("device=meta", "fwd", "float32", big-1), 90, ""},
		{"input data only", ampTrace("device=meta", "data", "float32", big), 90, ""},
		{"stopped short", strings.Replace(ampTrace("device=meta", "fwd", "float32", big), "E\tsteps\t\t1\t1 optimizer steps traced",
			"E\terror\taten.foo.default\t1\tno meta kernel", 1), 90, ""},
		{"ended by itself", strings.Replace(ampTrace("device=meta", "fwd", "float32", big), "E\tsteps", "E\texit", 1), 90, "bfloat16"},
	}
	for _, c := range cases {
		tr, err := ParseTrace(strings.NewReader(c.text))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := AutocastRetrace(tr, c.cc); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestRetraceLever: a retrace that ran through is a lever with its own
// replay's figures, marked retraced; one that failed is no lever and is
// said in RetracesNotOffered, as is one whose autocast region the hook
// could not open, and one that saves too little, with its figure.
func TestRetraceLever(t *testing.T) {
	gpu, err := LookupGPU("A10")
	if err != nil {
		t.Fatal(err)
	}
	parse := func(s string) *Trace {
		tr, err := ParseTrace(strings.NewReader(s))
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	base := parse(ampTrace("device=meta", "fwd", "float32", 1<<30))
	half := parse(ampTrace("device=meta\tautocast=bfloat16", "fwd", "bfloat16", 1<<29))
	_, f, err := FitTrace(base, gpu, 0.05, AmpRetrace("bfloat16", half))
	if err != nil {
		t.Fatal(err)
	}
	alone, _, err := FitTrace(half, gpu, 0.05) // the retrace's own report
	if err != nil {
		t.Fatal(err)
	}
	want := alone.ProcessBytes
	var amp *Lever
	for i := range f.Levers {
		if f.Levers[i].Lever == ampLeverBF16 {
			amp = &f.Levers[i]
		}
	}
	if amp == nil || !amp.Retraced || amp.ProcessBytes != want || len(f.RetracesNotOffered) != 0 {
		t.Fatalf("amp lever %+v (want %d B, retraced), not offered %+v", amp, want, f.RetracesNotOffered)
	}

	failed := parse(strings.Replace(ampTrace("device=meta\tautocast=bfloat16", "fwd", "bfloat16", 1<<29),
		"E\tsteps\t\t1\t1 optimizer steps traced", "E\terror\taten.index_add_.default\t1\tindex_add_(): self (Float) and source (BFloat16) must have the same scalar type", 1))
	unopened := parse(strings.Replace(ampTrace("device=meta\tautocast=float16", "fwd", "float32", 1<<30),
		"P\tforward", "W\tautocast\ttorch.autocast\t1\tthe amp lever's autocast region could not be opened: no\nP\tforward", 1))
	small := parse(ampTrace("device=meta\tautocast=bfloat16", "fwd", "bfloat16", 1<<30-1<<20))
	_, f, err = FitTrace(base, gpu, 0.05, AmpRetrace("bfloat16", failed), AmpRetrace("float16", unopened), AmpRetrace("bfloat16", small))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range f.Levers {
		if l.Retraced {
			t.Errorf("a lever from a failed or small retrace: %+v", l)
		}
	}
	alone, _, err = FitTrace(small, gpu, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	n := f.RetracesNotOffered
	if len(n) != 3 || n[0].Lever != ampLeverBF16 || n[0].End == nil || n[0].End.Op != "aten.index_add_.default" ||
		n[1].Lever != ampLeverFP16 || n[1].End == nil || n[1].End.Kind != "autocast" ||
		n[2].End != nil || n[2].ProcessBytes != alone.ProcessBytes {
		t.Errorf("not offered %+v, want index_add_'s failure, the unopened region, and the small one's %d B", n, alone.ProcessBytes)
	}
}
