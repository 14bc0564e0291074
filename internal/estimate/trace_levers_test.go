package estimate

import (
	"fmt"
	"strings"
	"testing"
)

// leverTrace: one step of a 64 Mi-element weight (256 MiB in float32):
// an input batch, a forward activation kept for the backward, the
// gradient, AdamW's two states and the foreach step's temporaries (one per
// state). The step makes the peak.
func leverTrace(stateDType string) string {
	const w = 256 << 20
	return "torchmem-trace\t1\tdevice=meta\ttorch=2.5.1\tsteps=1\n" +
		"S\t1\ttrain.py:10:<module>\n" +
		fmt.Sprintf("A\t1\t%d\tother\tsetup\t1\t1\t\taten._to_copy.default\tfloat32\t8192,8192\n", w) +
		"C\t1\tparam\n" +
		"P\tforward\t1\n" +
		"A\t2\t33554432\tdata\tforward\t1\t1\t\taten._to_copy.default\tfloat32\t8,1024,1024\n" +
		"A\t3\t100663296\tfwd\tforward\t1\t1\tfc\taten.mm.default\tfloat32\t8,1024,3072\n" +
		"P\tbackward\t1\n" +
		fmt.Sprintf("A\t4\t%d\tbwd\tbackward\t1\t1\t\taten.mm.default\tfloat32\t8192,8192\n", w) +
		"F\t3\nF\t2\n" +
		"C\t4\tgrad\n" +
		"P\toptimizer\t1\n" +
		fmt.Sprintf("A\t5\t%d\topttemp\toptimizer\t1\t1\t\taten.zeros_like.default\t%s\t8192,8192\n", w, stateDType) +
		fmt.Sprintf("A\t6\t%d\topttemp\toptimizer\t1\t1\t\taten.zeros_like.default\t%s\t8192,8192\n", w, stateDType) +
		"C\t5\toptstate\nC\t6\toptstate\n" +
		fmt.Sprintf("A\t7\t%d\topttemp\toptimizer\t1\t1\t\taten._foreach_mul.Scalar\tfloat32\t8192,8192\n", w) +
		fmt.Sprintf("A\t8\t%d\topttemp\toptimizer\t1\t1\t\taten._foreach_sqrt.default\tfloat32\t8192,8192\n", w) +
		"F\t7\nF\t8\n" +
		"P\tafter_step\t2\n" +
		"E\tsteps\t\t1\t1 optimizer steps traced\n"
}

func leversOf(t *testing.T, text string) (*TraceResult, *Fit) {
	t.Helper()
	tr, err := ParseTrace(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	g, _ := LookupGPU("T4")
	r, f, err := FitTrace(tr, g, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	return r, f
}

// TestTraceLevers: the float32 states made 8-bit (a byte a value and an
// absmax a 256-value block, no step temporaries) save the most; the fused
// step saves the foreach temporaries; a batch halved saves least: the
// step, not the batch, makes the allocated peak, and it saves only the
// reserve the halved data and activation leave cached (64 MiB).
func TestTraceLevers(t *testing.T) {
	r, f := leversOf(t, leverTrace("float32"))
	got := map[string]Lever{}
	var order []string
	for _, l := range f.Levers {
		got[l.Lever] = l
		order = append(order, l.Lever)
		if l.ProcessBytes+l.SavedBytes != r.ProcessBytes || l.SavedBytes < minTraceLeverSaving {
			t.Errorf("%s: process %d + saved %d, base %d", l.Lever, l.ProcessBytes, l.SavedBytes, r.ProcessBytes)
		}
	}
	if strings.Join(order, " ") != "8bit-optimizer fused-optimizer half-batch-accum" {
		t.Fatalf("levers %v, want 8bit-optimizer, fused-optimizer, half-batch-accum", order)
	}
	if s := got["half-batch-accum"].SavedBytes; s != (32<<20+96<<20)/2 {
		t.Errorf("half-batch-accum saves %d B, want half the data and activation's %d", s, (32<<20+96<<20)/2)
	}
	// 8-bit: the temporaries go and the states shrink, at most to nothing
	if s := got["8bit-optimizer"].SavedBytes; s <= 2*(256<<20) || s >= 4*(256<<20) {
		t.Errorf("8bit-optimizer saves %d B, want more than the temporaries and less than states and temporaries", s)
	}
	// each 256 MiB float32 state becomes a byte a value and an absmax a block
	tr, _ := ParseTrace(strings.NewReader(leverTrace("float32")))
	if got, want := eightBitStates(&tr.Allocs[4]), int64(64<<20+4*((64<<20)/bnbBlock)); got != want {
		t.Errorf("8-bit state %d B, want %d", got, want)
	}
	if eightBitStates(&tr.Allocs[6]) != 0 || eightBitStates(&tr.Allocs[0]) != 256<<20 {
		t.Error("8-bit: a step temporary kept, or a weight resized")
	}
	if s := got["fused-optimizer"].SavedBytes; s != 2*(256<<20) {
		t.Errorf("fused-optimizer saves %d B, want the two temporaries' %d", s, 2*(256<<20))
	}
}

// TestTraceLeversBatchOfOne: input data of a batch of 1 leaves nothing to
// halve.
func TestTraceLeversBatchOfOne(t *testing.T) {
	_, f := leversOf(t, strings.Replace(leverTrace("float32"), "float32\t8,1024,1024", "float32\t1,1024,1024", 1))
	for _, l := range f.Levers {
		if l.Lever == "half-batch-accum" {
			t.Errorf("a batch of 1 offered half-batch-accum: %+v", l)
		}
	}
}

// TestTraceLeversEightBitAlready: states already 8-bit (uint8) leave no
// 8-bit lever.
func TestTraceLeversEightBitAlready(t *testing.T) {
	_, f := leversOf(t, leverTrace("uint8"))
	for _, l := range f.Levers {
		if l.Lever == "8bit-optimizer" {
			t.Errorf("8-bit states offered the 8-bit lever: %+v", l)
		}
	}
}

// TestHalfBatchKeepsWeightShapes: what a pass makes in a weight's shape
// (or its transpose) is not halved; activations and data are.
func TestHalfBatchKeepsWeightShapes(t *testing.T) {
	tr, err := ParseTrace(strings.NewReader(leverTrace("float32")))
	if err != nil {
		t.Fatal(err)
	}
	resize := halfBatch(tr)
	for id, want := range map[int]int64{1: 256 << 20, 2: 16 << 20, 3: 48 << 20, 4: 256 << 20, 7: 256 << 20} {
		if got := resize(&tr.Allocs[id-1]); got != want {
			t.Errorf("allocation %d (%s %s): %d B, want %d", id, tr.Allocs[id-1].Kind, tr.Allocs[id-1].Shape, got, want)
		}
	}
	if transposed("3,5") != "5,3" || transposed("2,3,5") != "2,3,5" || transposed("7") != "7" {
		t.Error("transposed")
	}
}

// TestHalfBatchIsTheTrainingBatch: the batch to halve is input data a
// backward ran on; a sample's batch (freed before any backward) is not,
// and its unused graph keeps its size under the lever.
func TestHalfBatchIsTheTrainingBatch(t *testing.T) {
	const mib = 1 << 20
	trace := func(trainRows int) string {
		return "torchmem-trace\t1\tdevice=meta\tsteps=1\n" +
			fmt.Sprintf("A\t1\t%d\tdata\tsetup\t1\t0\t\taten._to_copy.default\tfloat32\t%d,1024\n", trainRows*4096, trainRows) +
			"P\tforward\t1\n" +
			fmt.Sprintf("A\t2\t%d\tfwd\tforward\t1\t0\tnet\taten.addmm.default\tfloat32\t%d,1024\n", trainRows*4096, trainRows) +
			"P\tbackward\t1\n" +
			"F\t2\nF\t1\n" +
			"P\tafter_step\t1\n" +
			"A\t3\t" + fmt.Sprint(5*mib) + "\tdata\tafter_step\t1\t0\t\taten._to_copy.default\tfloat32\t5,1024\n" +
			"A\t4\t" + fmt.Sprint(100*mib) + "\tfwd\tforward\t1\t0\tnet\taten.addmm.default\tfloat32\t5,5242880\n" +
			"U\t4\nF\t4\nF\t3\n" +
			"E\tsteps\t\t1\tdone\n"
	}
	for rows, want := range map[int]bool{1: false, 8: true} {
		tr, err := ParseTrace(strings.NewReader(trace(rows)))
		if err != nil {
			t.Fatal(err)
		}
		if got := hasBatchToHalve(tr); got != want {
			t.Errorf("training batch %d beside a sample of 5: lever %v, want %v", rows, got, want)
		}
		if resize := halfBatch(tr); resize(&tr.Allocs[3]) != 100*mib || resize(&tr.Allocs[1]) != int64(rows*4096+1)/2 {
			t.Errorf("batch %d: the sample's graph %d B, the forward's %d B", rows, resize(&tr.Allocs[3]), resize(&tr.Allocs[1]))
		}
	}
}

// TestLoadToHostLever: a 256 MiB state dict torch.load put on the GPU and
// kept through the step is torch.load's in the breakdown, and loading it to
// the host saves all of it; a trace without one has no such lever.
func TestLoadToHostLever(t *testing.T) {
	const w = 256 << 20
	loaded := strings.Replace(leverTrace("float32"), "P\tforward\t1\n",
		fmt.Sprintf("A\t9\t%d\tdata\tsetup\t1\t1\t\taten.empty_strided.default\tfloat32\t8192,8192\nC\t9\tloaded\n", w)+
			"P\tforward\t1\n", 1)
	r, f := leversOf(t, loaded)
	var inBreakdown int64
	for _, it := range r.Breakdown {
		if it.Name == CatLoaded.String() {
			inBreakdown = it.Bytes
		}
	}
	if inBreakdown != w {
		t.Errorf("breakdown %v: want torch_load %d", r.Breakdown, w)
	}
	var lever *Lever
	for i := range f.Levers {
		if f.Levers[i].Lever == loadToHostLever {
			lever = &f.Levers[i]
		}
	}
	if lever == nil || lever.SavedBytes < w {
		t.Errorf("levers %+v: want load-to-host saving %d", f.Levers, w)
	}
	_, plain := leversOf(t, leverTrace("float32"))
	for _, l := range plain.Levers {
		if l.Lever == loadToHostLever {
			t.Errorf("load-to-host offered without a torch.load: %+v", l)
		}
	}
}
