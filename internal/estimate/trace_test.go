package estimate

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/allocconf"
)

// A hand-made trace: a weight, a forward activation kept for backward, a
// forward temporary, a gradient, the optimizer state, the end.
const smallTrace = "torchmem-trace\t1\tdevice=meta\ttorch=2.5.1\tsteps=1\n" +
	"S\t1\ttrain.py:10:<module>\n" +
	"A\t1\t4000\tdata\tsetup\t1\t1\t\taten._to_copy.default\tfloat32\t1000\n" +
	"C\t1\tparam\n" +
	"P\tforward\t1\n" +
	"A\t2\t3000000\tfwd\tforward\t1\t1\tfc\taten.addmm.default\tfloat32\t750000\n" +
	"A\t3\t100\tfwd\tforward\t1\t1\tfc\taten.relu.default\tfloat32\t25\n" +
	"F\t3\n" +
	"P\tbackward\t1\n" +
	"A\t4\t4000\tbwd\tbackward\t1\t1\t\taten.mm.default\tfloat32\t1000\n" +
	"F\t2\n" +
	"C\t4\tgrad\n" +
	"P\toptimizer\t1\n" +
	"A\t5\t4000\topttemp\toptimizer\t1\t1\t\taten.zeros_like.default\tfloat32\t1000\n" +
	"C\t5\toptstate\n" +
	"P\tafter_step\t2\n" +
	"E\tsteps\t\t1\t1 optimizer steps traced\n"

func TestReplaySmallTrace(t *testing.T) {
	tr, err := ParseTrace(strings.NewReader(smallTrace))
	if err != nil {
		t.Fatal(err)
	}
	r := ReplayTrace(tr, TraceReplay{ComputeCapability: 80})
	ws := cublasWorkspace(80) // 8519680
	// Peak, at the backward's mm: weight 4096 + activation 3000320
	// (rounded to 512) + grad 4096 + the forward's workspace + the
	// backward's, which takes the 9451520 B left of the first 20 MiB
	// segment whole (the 931840 B rest is under the 1 MiB split threshold).
	ws2 := int64(20<<20) - ws - 3000320
	want := 4096 + 3000320 + 4096 + ws + ws2
	if r.PeakAllocatedBytes != want || r.LiveBytesPeak != 4000+3000000+4000 {
		t.Errorf("peak allocated %d (want %d), live %d", r.PeakAllocatedBytes, want, r.LiveBytesPeak)
	}
	got := map[string]int64{}
	for _, it := range r.Breakdown {
		got[it.Name] = it.Bytes
	}
	if got["weights"] != 4096 || got["activations"] != 3000320 || got["gradients"] != 4096 || got["cublas_workspace"] != ws+ws2 {
		t.Errorf("breakdown %v", r.Breakdown)
	}
	if r.PeakPhase != "backward, step 1" || r.Steps != 1 || r.Params != 1000 || r.End == nil || r.End.Kind != "steps" {
		t.Errorf("phase %q steps %d params %d end %+v", r.PeakPhase, r.Steps, r.Params, r.End)
	}
	if len(r.Sites) == 0 || r.Sites[0].Where != "train.py:10:<module>" || r.Sites[0].Op != "aten.addmm.default" {
		t.Errorf("sites %+v", r.Sites)
	}
	// The temporary (relu, freed in the forward) is a temporary.
	cats := tr.categories()
	if cats[2] != CatTemporaries || cats[1] != CatActivations || cats[4] != CatOptState {
		t.Errorf("categories %v", cats)
	}
}

func TestParseTraceErrors(t *testing.T) {
	head := "torchmem-trace\t1\n"
	for _, c := range []struct{ in, want string }{
		{"", "empty trace"},
		{"hello\n", "line 1: not a torchmem trace"},
		{head + "F\t9\n", "line 2: allocation 9 not made"},
		{head + "A\t1\t10\tfwd\tforward\t1\t0\t\top\tfloat32\t\nF\t1\nF\t1\n", "line 4: allocation 1 freed twice"},
		{head + "A\t1\t-10\tfwd\tforward\t1\t0\t\top\tfloat32\t\n", "line 2: allocation \"1\": bad"},
		{head + "A\t1\t10\n", "line 2: event A: 3 fields, want 11"},
		{head + "Z\n", "line 2: unknown event \"Z\""},
		{head + "D\tworld\t0\n", "line 2: world size \"0\""},
		{head + "D\tworld\n", "line 2: event D: 2 fields, want 3"},
		{head + "D\thost_params\t-1\n", "line 2: host parameters \"-1\""},
		{head + "M\t-5\tpaged_optimizer_states\n", "line 2: memory outside the allocator: bytes \"-5\""},
		{head + "M\t5\tnccl\n", "line 2: memory outside the allocator: unknown kind \"nccl\""},
	} {
		_, err := ParseTrace(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.in, err, c.want)
		}
	}
}

// TestParseTraceDist: a distributed trace says whose figures they are: the
// world from the process group (or, until one is made, the launcher's),
// the backend asked for, the launcher, the wrappers and a rank asked for.
func TestParseTraceDist(t *testing.T) {
	head := "torchmem-trace\t1\n"
	for _, c := range []struct {
		in   string
		want TraceDist
	}{
		{"D\tlauncher\ttorchrun 8\n", TraceDist{World: 8, Launcher: "torchrun 8"}},
		{"D\tlauncher\ttorchrun 8\nD\tworld\t16\nD\tbackend\tnccl\nD\twrapper\tDistributedDataParallel\n",
			TraceDist{World: 16, Backend: "nccl", Launcher: "torchrun 8", Wrappers: []string{"DistributedDataParallel"}}},
		{"D\tworld\t2\nD\tbackend\tgloo\nD\trank\t3\nD\tfuture\tx\n", TraceDist{World: 2, Backend: "gloo", RankAsked: "3"}},
		// CPU offload: the running total of the shards kept on the host
		{"D\tworld\t4\nD\twrapper\tfully_shard\nD\thost_params\t100\nD\thost_params\t250\n",
			TraceDist{World: 4, Wrappers: []string{"fully_shard"}, HostParams: 250}},
	} {
		tr, err := ParseTrace(strings.NewReader(head + c.in))
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		if tr.Dist == nil || fmt.Sprint(*tr.Dist) != fmt.Sprint(c.want) {
			t.Errorf("%q: %+v, want %+v", c.in, tr.Dist, c.want)
		}
		if r := ReplayTrace(tr, TraceReplay{}); r.Distributed != tr.Dist || r.Params != c.want.HostParams {
			t.Errorf("%q: the result does not carry the distributed setup (or %d parameters, want the host's %d)",
				c.in, r.Params, c.want.HostParams)
		}
	}
	tr, _ := ParseTrace(strings.NewReader(smallTrace))
	if tr.Dist != nil {
		t.Errorf("a one-process trace has %+v", tr.Dist)
	}
}

// syntheticTrace makes a trace of n allocation and free events in steps
// of forward (allocations kept), backward (freed as gradients appear) and
// an optimizer step, sizes from 512 B to 64 MiB: the shape of a real one.
func syntheticTrace(n int) string {
	rng := rand.New(rand.NewSource(1))
	var b strings.Builder
	b.WriteString("torchmem-trace\t1\tdevice=meta\n")
	b.WriteString("S\t1\tsynthetic.py:1:<module>\n")
	id, events, step := 0, 0, 1
	var live []int
	for events < n {
		fmt.Fprintf(&b, "P\tforward\t%d\n", step)
		for k := 0; k < 2000 && events < n; k++ {
			id++
			size := int64(512) << uint(rng.Intn(18))
			fmt.Fprintf(&b, "A\t%d\t%d\tfwd\tforward\t%d\t1\tblock\taten.mm.default\tfloat32\t%d\n", id, size+int64(rng.Intn(512)), step, size/4)
			live = append(live, id)
			events++
			if rng.Intn(3) == 0 && events < n { // a temporary
				i := rng.Intn(len(live))
				fmt.Fprintf(&b, "F\t%d\n", live[i])
				live = append(live[:i], live[i+1:]...)
				events++
			}
		}
		fmt.Fprintf(&b, "P\tbackward\t%d\n", step)
		for len(live) > 0 && events < n {
			fmt.Fprintf(&b, "F\t%d\n", live[len(live)-1])
			live = live[:len(live)-1]
			events++
		}
		step++
	}
	b.WriteString("E\tsteps\t\t1\tdone\n")
	return b.String()
}

func TestSyntheticTraceParses(t *testing.T) {
	tr, err := ParseTrace(strings.NewReader(syntheticTrace(20000)))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Events() != 20000 {
		t.Fatalf("%d events", tr.Events())
	}
	r := ReplayTrace(tr, TraceReplay{})
	if r.PeakReservedBytes < r.PeakAllocatedBytes || r.PeakAllocatedBytes < r.LiveBytesPeak {
		t.Errorf("reserved %d < allocated %d or allocated < live %d", r.PeakReservedBytes, r.PeakAllocatedBytes, r.LiveBytesPeak)
	}
}

// BenchmarkTraceReplay1M: the allocator replay of a 1M-event trace
// (parsed once, outside the timer); the target is 2 s.
func BenchmarkTraceReplay1M(b *testing.B) {
	tr, err := ParseTrace(strings.NewReader(syntheticTrace(1_000_000)))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ReplayTrace(tr, TraceReplay{})
	}
}

// BenchmarkTraceReplay1MExpandable: the same under
// expandable_segments:True (pages mapped into one segment per pool).
func BenchmarkTraceReplay1MExpandable(b *testing.B) {
	tr, err := ParseTrace(strings.NewReader(syntheticTrace(1_000_000)))
	if err != nil {
		b.Fatal(err)
	}
	tr.Alloc.Expandable = true
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ReplayTrace(tr, TraceReplay{GPUBytes: 80 << 30})
	}
}

// BenchmarkFitTrace1M: the same trace fitted to a GPU, its four what-if
// levers replayed (what estimate --trace --gpu does after the trace): an
// input batch, an optimizer state and a step temporary marked among its
// allocations, and its forward's allocations put in 24 blocks h.N, 50 in a
// row, so that each applies.
func BenchmarkFitTrace1M(b *testing.B) {
	tr := leverTrace1M(b)
	g, _ := LookupGPU("H100-80GB")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := FitTrace(tr, g, 0.05); err != nil {
			b.Fatal(err)
		}
	}
}

// leverTrace1M: the 1M-event synthetic trace with what each lever needs:
// an input batch, an optimizer state, a step temporary, and its forward's
// allocations in 24 blocks h.N, 50 in a row.
func leverTrace1M(b *testing.B) *Trace {
	tr, err := ParseTrace(strings.NewReader(syntheticTrace(1_000_000)))
	if err != nil {
		b.Fatal(err)
	}
	tr.Allocs[0].Kind = "data"
	tr.Allocs[1].Kind, tr.Allocs[1].Bytes = "optstate", 1<<20
	tr.Allocs[2].Kind = "opttemp"
	for i := range tr.Allocs {
		tr.Allocs[i].Module = fmt.Sprintf("h.%d.mlp", i/50%24)
	}
	return tr
}

// BenchmarkPlanTrace1M: the same trace on a GPU it does not fit (a
// 10 GiB one), so FitTrace searches the plan too: up to 23 more replays
// (no amp retrace: one base), each combination's resizes and event edits
// made on its own copy.
func BenchmarkPlanTrace1M(b *testing.B) {
	tr := leverTrace1M(b)
	g := GPU{Name: "10GiB", MemoryBytes: 10 << 30}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, f, err := FitTrace(tr, g, 0.05)
		if err != nil || f.TracePlan == nil {
			b.Fatalf("%v, plan %v", err, f.TracePlan)
		}
		b.ReportMetric(float64(f.TracePlan.Replayed), "replays/op")
	}
}

// BenchmarkTraceParse1M: reading the same trace's text.
func BenchmarkTraceParse1M(b *testing.B) {
	s := syntheticTrace(1_000_000)
	b.SetBytes(int64(len(s)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ParseTrace(strings.NewReader(s)); err != nil {
			b.Fatal(err)
		}
	}
}

func FuzzParseTrace(f *testing.F) {
	f.Add(smallTrace)
	f.Add(syntheticTrace(200))
	f.Add("torchmem-trace\t1\nA\t1\t0\tfwd\tforward\t1\t0\t\t\t\t\nC\t1\tgrad\nF\t1\n")
	f.Add("torchmem-trace\t1\nD\tlauncher\ttorchrun 4\nD\tworld\t4\nD\twrapper\tDistributedDataParallel\n")
	f.Add("torchmem-trace\t1\nA\t1\t4096\tfwd\tforward\t1\t0\t\t\t\t\nU\t1\nF\t1\n")
	f.Add("torchmem-trace\t1\nK\tmemory_fraction\t0.25\nA\t1\t104857600\tfwd\tforward\t1\t0\t\t\t\t\nR\n")
	f.Add(ckptTrace)                                                                         // blocks: O and L events, the checkpoint lever
	f.Add(strings.Replace(ckptTrace, "L\t10\t2\n", "L\t10\t2\nI\t12\th.1\nI\t10\th.9\n", 1)) // I events: inputs kept
	f.Fuzz(func(t *testing.T, s string) {
		tr, err := ParseTrace(strings.NewReader(s))
		if err != nil {
			return
		}
		r := ReplayTrace(tr, TraceReplay{Limit: 1 << 30})
		if r.PeakAllocatedBytes < 0 || r.PeakReservedBytes < 0 {
			t.Fatalf("negative peaks %+v", r.Result)
		}
		AutocastRetrace(tr, 75)
		TraceLevers(tr, r.Result, TraceReplay{Limit: 1 << 30}, 1<<30, []Retrace{AmpRetrace("bfloat16", tr)})
		PlanTrace(tr, GPU{Name: "fuzz", MemoryBytes: 1 << 30}, 0, []Retrace{AmpRetrace("bfloat16", tr)}, DefaultPlanTop)
		TraceSnapshot(tr, TraceReplay{})
		// the allocator's other rules: expandable segments, max_split_size_mb
		tr.Alloc = allocconf.Conf{Expandable: true, MaxSplit: 64 << 20}
		if r := ReplayTrace(tr, TraceReplay{Limit: 1 << 30, GPUBytes: 1 << 30}); r.PeakReservedBytes < 0 {
			t.Fatalf("negative reserved %+v", r.Result)
		}
		FitTrace(tr, GPU{Name: "fuzz", MemoryBytes: 1 << 30}, 0)
		TraceSnapshot(tr, TraceReplay{})
	})
}

// TestTracePartial: only a trace that stopped (error, killed, truncated)
// short of the steps asked for is partial; one that reached them, or a
// program that ended by itself, is not.
func TestTracePartial(t *testing.T) {
	for _, c := range []struct {
		end   string
		done  int
		want  bool
		asked string
	}{
		{"error", 0, true, "2"}, {"error", 1, true, "2"}, {"killed", 0, true, "2"}, {"truncated", 1, true, "2"},
		{"error", 2, false, "2"}, {"exit", 0, false, "2"}, {"steps", 2, false, "2"}, {"error", 5, true, ""},
	} {
		tr := &Trace{Header: map[string]string{"steps": c.asked}}
		r := &TraceResult{Steps: c.done, End: &TraceNote{Kind: c.end}}
		if got := TracePartial(tr, r); got != c.want {
			t.Errorf("end %s after %d of %q steps: partial %v, want %v", c.end, c.done, c.asked, got, c.want)
		}
	}
}

// TestProgramRefused: a program that read the GPU's free memory and
// stopped because the job does not fit (transformers' bitsandbytes
// quantizer under device_map="auto": a 70B QLoRA on a 24 GB card) does not
// fit, though what ran does; an op's failure or another exception is only
// a partial trace.
func TestProgramRefused(t *testing.T) {
	bnb := "ValueError: Some modules are dispatched on the CPU or the disk. Make sure you have enough GPU RAM to fit the quantized model."
	for _, c := range []struct {
		kind, op, msg string
		want          bool
	}{
		{"error", "", bnb, true},
		{"error", "", "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB", true},
		{"error", "aten.mm.default", "out of memory", false},
		{"error", "", "FileNotFoundError: data/train.bin", false},
		{"steps", "", "2 optimizer steps traced", false},
	} {
		trace := strings.Replace(smallTrace, "E\tsteps\t\t1\t1 optimizer steps traced\n",
			"E\t"+c.kind+"\t"+c.op+"\t1\t"+c.msg+"\n", 1)
		tr, err := ParseTrace(strings.NewReader(trace))
		if err != nil {
			t.Fatal(err)
		}
		gpu, _ := LookupGPU("RTX-4090")
		_, f, err := FitTrace(tr, gpu, 0.05)
		if err != nil {
			t.Fatal(err)
		}
		if f.ProgramRefused != c.want || f.Fits == c.want {
			t.Errorf("%s %q %q: refused %v, fits %v; want refused %v", c.kind, c.op, c.msg, f.ProgramRefused, f.Fits, c.want)
		}
	}
}

// The trainable parameters of a trace are the gradients' elements in the
// first step that made any: a frozen weight has none, a second step's
// gradients (set_to_none) are not counted again.
func TestTraceTrainableParams(t *testing.T) {
	tr, err := ParseTrace(strings.NewReader(smallTrace))
	if err != nil {
		t.Fatal(err)
	}
	if r := ReplayTrace(tr, TraceReplay{ComputeCapability: 80}); r.TrainableParams != 1000 || r.Params != 1000 {
		t.Errorf("trainable %d of %d params, want 1000 of 1000", r.TrainableParams, r.Params)
	}
	frozen := strings.Replace(smallTrace, "P\toptimizer\t1\n",
		"A\t6\t8000\tdata\tsetup\t1\t1\t\taten._to_copy.default\tbfloat16\t4000\nC\t6\tparam\n"+
			"P\toptimizer\t1\n", 1)
	frozen = strings.Replace(frozen, "P\tafter_step\t2\n",
		"P\tafter_step\t2\nA\t7\t4000\tbwd\tbackward\t2\t1\t\taten.mm.default\tfloat32\t1000\nC\t7\tgrad\n", 1)
	tr, err = ParseTrace(strings.NewReader(frozen))
	if err != nil {
		t.Fatal(err)
	}
	if r := ReplayTrace(tr, TraceReplay{ComputeCapability: 80}); r.TrainableParams != 1000 || r.Params != 5000 {
		t.Errorf("with a frozen bf16 weight: trainable %d of %d params, want 1000 of 5000", r.TrainableParams, r.Params)
	}
}

// A sparse gradient (nn.Embedding(sparse=True)) holds the rows a batch
// touched: its G events say the parameter's elements for its values and
// none for its indices, so a 1M-element table with 1000 rows touched is a
// million trainable parameters, not the 32000 elements its values hold.
func TestTraceSparseGradientParams(t *testing.T) {
	sparse := strings.Replace(smallTrace, "P\toptimizer\t1\n",
		"A\t6\t4000000\tdata\tsetup\t1\t1\t\taten._to_copy.default\tfloat32\t31250,32\nC\t6\tparam\n"+
			"A\t7\t128000\tbwd\tbackward\t1\t1\t\taten.index_select.default\tfloat32\t1000,32\nC\t7\tgrad\n"+
			"A\t8\t8000\tdata\tsetup\t1\t1\t\taten._to_copy.default\tint64\t1000\nC\t8\tgrad\n"+
			"G\t7\t1000000\nG\t8\t0\nP\toptimizer\t1\n", 1)
	tr, err := ParseTrace(strings.NewReader(sparse))
	if err != nil {
		t.Fatal(err)
	}
	if r := ReplayTrace(tr, TraceReplay{ComputeCapability: 80}); r.TrainableParams != 1000+1000000 || r.Params != 1000+1000000 {
		t.Errorf("trainable %d of %d params, want %d of %d", r.TrainableParams, r.Params, 1001000, 1001000)
	}
	for _, bad := range []string{"G\t99\t5\n", "G\t7\t-1\n", "G\t7\tx\n"} {
		if _, err := ParseTrace(strings.NewReader(strings.Replace(sparse, "G\t8\t0\n", bad, 1))); err == nil {
			t.Errorf("%q: parsed, want an error", bad)
		}
	}
}

// A Q event: trainable parameters no traced step gave a gradient (a layer
// LayerDrop skipped), and the optimizer states a later step makes for
// them: reported with the peak they make, counted as trainable, and the
// peak itself left as the steps made it.
func TestTraceStatesNotMade(t *testing.T) {
	plain, err := ParseTrace(strings.NewReader(smallTrace))
	if err != nil {
		t.Fatal(err)
	}
	q := strings.Replace(smallTrace, "E\tsteps", "Q\t8000\t1000\nE\tsteps", 1)
	if q == smallTrace {
		t.Fatal("smallTrace has no E steps line")
	}
	tr, err := ParseTrace(strings.NewReader(q))
	if err != nil {
		t.Fatal(err)
	}
	base, r := ReplayTrace(plain, TraceReplay{ComputeCapability: 80}), ReplayTrace(tr, TraceReplay{ComputeCapability: 80})
	p := r.StatesNotMade
	if base.StatesNotMade != nil || p == nil || p.Bytes != 8000 || p.Params != 1000 ||
		p.PeakAllocatedBytes != r.PeakAllocatedBytes+8000 || r.PeakAllocatedBytes != base.PeakAllocatedBytes ||
		r.TrainableParams != base.TrainableParams+1000 {
		t.Errorf("states not made %+v, peak %d (without %d), trainable %d (without %d)", p, r.PeakAllocatedBytes,
			base.PeakAllocatedBytes, r.TrainableParams, base.TrainableParams)
	}
	for _, bad := range []string{"Q\t-1\t5\n", "Q\tx\t5\n", "Q\t5\n"} {
		if _, err := ParseTrace(strings.NewReader(strings.Replace(q, "Q\t8000\t1000\n", bad, 1))); err == nil {
			t.Errorf("%q: parsed, want an error", bad)
		}
	}
}

// TestTraceQuantizedAndPaged: a bitsandbytes 4-bit weight ("param4",
// uint8 storage) counts two parameters a byte; paged optimizer states (M
// events) are in the process's figure and the breakdown, beside the CUDA
// context, not in allocated or reserved.
func TestTraceQuantizedAndPaged(t *testing.T) {
	q := strings.Replace(smallTrace, "P\tforward\t1\n",
		"A\t6\t8000\tdata\tsetup\t1\t1\t\tbitsandbytes.quantize_4bit.default\tuint8\t8000,1\nC\t6\tparam4\n"+
			"P\tforward\t1\n", 1)
	q = strings.Replace(q, "P\toptimizer\t1\n",
		"M\t3000000\tpaged_optimizer_states\nP\toptimizer\t1\nM\t1000000\tpaged_optimizer_states\n", 1)
	plain, err := ParseTrace(strings.NewReader(smallTrace))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := ParseTrace(strings.NewReader(q))
	if err != nil {
		t.Fatal(err)
	}
	base := ReplayTrace(plain, TraceReplay{ComputeCapability: 80})
	r := ReplayTrace(tr, TraceReplay{ComputeCapability: 80})
	if r.Params != 1000+16000 || r.TrainableParams != 1000 {
		t.Errorf("params %d (trainable %d), want 17000 (1000)", r.Params, r.TrainableParams)
	}
	// the 4-bit weight's 8000 bytes (one 2 MiB segment either way)
	if r.PeakAllocatedBytes != base.PeakAllocatedBytes+8192 || r.PeakReservedBytes != base.PeakReservedBytes {
		t.Errorf("allocated %d, reserved %d; want %d and %d (the weight only)", r.PeakAllocatedBytes,
			r.PeakReservedBytes, base.PeakAllocatedBytes+8192, base.PeakReservedBytes)
	}
	if r.ProcessBytes != base.ProcessBytes+4_000_000 {
		t.Errorf("process %d, want %d + 4,000,000 paged", r.ProcessBytes, base.ProcessBytes)
	}
	names := []string{}
	for _, it := range r.Breakdown {
		names = append(names, it.Name)
		if it.Name == "paged_optimizer_states" && it.Bytes != 4_000_000 {
			t.Errorf("paged optimizer states %d bytes, want 4,000,000", it.Bytes)
		}
	}
	got := strings.Join(names, ",")
	if !strings.Contains(got, "allocator_cache_and_fragmentation,paged_optimizer_states,cuda_context,cuda_libraries") {
		t.Errorf("breakdown %s: want the paged states before the CUDA context", got)
	}
}

// Two jobs in one process (a measuring harness): the first is a fresh
// process's; the second finds the cuBLAS workspaces made, so its peak
// allocated leaves them out, and the allocator is the one the first left.
func TestReplayTracesOneProcess(t *testing.T) {
	tr, err := ParseTrace(strings.NewReader(smallTrace))
	if err != nil {
		t.Fatal(err)
	}
	o := TraceReplay{ComputeCapability: 80}
	fresh := ReplayTrace(tr, o)
	rs := ReplayTracesOneProcess([]*Trace{tr, tr}, o)
	if rs[0].PeakAllocatedBytes != fresh.PeakAllocatedBytes || rs[0].PeakReservedBytes != fresh.PeakReservedBytes {
		t.Errorf("first job %d/%d, fresh process %d/%d", rs[0].PeakAllocatedBytes, rs[0].PeakReservedBytes,
			fresh.PeakAllocatedBytes, fresh.PeakReservedBytes)
	}
	// The backward's workspace took the 9,451,520 B rest of the first
	// segment whole (TestReplaySmallTrace): that block is the baseline.
	if want := fresh.PeakAllocatedBytes - cublasWorkspace(80) - 9451520; rs[1].PeakAllocatedBytes != want {
		t.Errorf("second job's peak allocated %d, want %d (the workspaces are its baseline)", rs[1].PeakAllocatedBytes, want)
	}
	if rs[1].PeakReservedBytes < fresh.PeakReservedBytes {
		t.Errorf("second job's reserved %d under the first's %d: the workspaces' segments stay", rs[1].PeakReservedBytes, fresh.PeakReservedBytes)
	}
}

// TestReplayCublasWorkspace: each thread's cuBLAS workspace (32 MiB on
// sm90) is made at its first matrix product, just after its output, as an
// H200 run makes it: the main thread's after the forward's mm, not under
// the 100 MiB the forward made and freed before it; the autograd thread's
// after the backward's mm, not under its 100 MiB. A trace with no matrix
// product has none.
func TestReplayCublasWorkspace(t *testing.T) {
	const tr = "torchmem-trace\t1\tdevice=meta\ttorch=2.6\tsteps=1\n" +
		"S\t1\ttrain.py:5:<module>\n" +
		"P\tforward\t1\n" +
		"A\t1\t104857600\tfwd\tforward\t1\t1\t\taten.relu.default\tfloat32\t26214400\n" +
		"F\t1\n" +
		"A\t2\t1048576\tfwd\tforward\t1\t1\t\tMM\tfloat32\t262144\n" +
		"F\t2\n" +
		"P\tbackward\t1\n" +
		"A\t3\t104857600\tbwd\tbackward\t1\t1\t\taten.threshold_backward.default\tfloat32\t26214400\n" +
		"F\t3\n" +
		"A\t4\t1048576\tbwd\tbackward\t1\t1\t\tMM\tfloat32\t262144\n" +
		"F\t4\n" +
		"E\tsteps\t\t1\t1 optimizer steps traced\n"
	for op, want := range map[string]int64{"aten.mm.default": 104857600 + 32<<20, "aten.mul.Tensor": 104857600} {
		parsed, err := ParseTrace(strings.NewReader(strings.ReplaceAll(tr, "MM", op)))
		if err != nil {
			t.Fatal(err)
		}
		if r := ReplayTrace(parsed, TraceReplay{ComputeCapability: 90}); r.PeakAllocatedBytes != want {
			t.Errorf("%s: peak allocated %d, want %d", op, r.PeakAllocatedBytes, want)
		}
	}
}

// TestReplayConvWorkspace: a tensor a convolution writes comes with
// cuDNN's workspace for the call (cudnnConvWorkspace, the built-in's rule):
// the same trace with the ops named as elementwise ones instead reaches a
// peak one workspace lower; a bias gradient (one dimension, not cuDNN's)
// takes none.
func TestReplayConvWorkspace(t *testing.T) {
	const conv = "torchmem-trace\t1\tdevice=meta\ttorch=2.6\tsteps=1\n" +
		"S\t1\ttrain.py:5:<module>\n" +
		"P\tforward\t1\n" +
		"A\t1\t31457280\tfwd\tforward\t1\t1\tconv\tFWD\tfloat16\t16,32,320,96\n" +
		"P\tbackward\t1\n" +
		"A\t2\t31457280\tbwd\tbackward\t1\t1\tconv\tBWD\tfloat16\t16,32,320,96\n" +
		"A\t3\t4194304\tbwd\tbackward\t1\t1\tconv\tBIAS\tfloat32\t1048576\n" +
		"F\t1\n" +
		"E\tsteps\t\t1\t1 optimizer steps traced\n"
	replay := func(fwd, bwd, bias string) *TraceResult {
		t.Helper()
		r := strings.NewReplacer("FWD", fwd, "BWD", bwd, "BIAS", bias)
		tr, err := ParseTrace(strings.NewReader(r.Replace(conv)))
		if err != nil {
			t.Fatal(err)
		}
		return ReplayTrace(tr, TraceReplay{ComputeCapability: 80})
	}
	const c, cb, mm = "aten.convolution.default", "aten.convolution_backward.default", "aten.mul.Tensor"
	with, without := replay(c, cb, cb), replay(mm, mm, mm)
	// without: the peak is at the bias gradient's 4 MiB; with: at the
	// input gradient's 30 MiB workspace, freed before the bias gradient
	if d := with.PeakAllocatedBytes - without.PeakAllocatedBytes; d != 31457280-4194304 {
		t.Errorf("peak allocated %d - %d = %d, want a 30 MiB workspace where a 4 MiB tensor was", with.PeakAllocatedBytes, without.PeakAllocatedBytes, d)
	}
	if with.PeakReservedBytes <= without.PeakReservedBytes {
		t.Errorf("peak reserved %d, without workspaces %d: want more", with.PeakReservedBytes, without.PeakReservedBytes)
	}
	if b := replay(mm, mm, cb); b.PeakAllocatedBytes != without.PeakAllocatedBytes || b.PeakReservedBytes != without.PeakReservedBytes {
		t.Errorf("a bias gradient took a workspace: %d/%d, want %d/%d", b.PeakAllocatedBytes, b.PeakReservedBytes,
			without.PeakAllocatedBytes, without.PeakReservedBytes)
	}
}

// TestReplayEmptyCache: the program's torch.cuda.empty_cache() (an R line)
// gives the allocator's wholly free segments back where it was called, as
// PyTorch does: a 30 MiB tensor freed, the cache emptied, then a 40 MiB
// one reserves 40 MiB, not 70 (the 30 MiB segment cannot hold it). Not
// counted as the allocator's own releases at the limit.
func TestReplayEmptyCache(t *testing.T) {
	trace := func(empty bool) string {
		r := ""
		if empty {
			r = "R\n"
		}
		return "torchmem-trace\t1\tdevice=meta\ttorch=2.5.1\tsteps=1\n" +
			"S\t1\ttrain.py:10:<module>\n" +
			"A\t1\t31457280\tdata\tsetup\t1\t1\t\taten.empty.memory_format\tuint8\t31457280\n" +
			"F\t1\n" + r + r + // (two calls with nothing between are one)
			"A\t2\t41943040\tdata\tsetup\t1\t1\t\taten.empty.memory_format\tuint8\t41943040\n" +
			"E\texit\t\t1\tthe program ended\n"
	}
	for _, c := range []struct {
		empty bool
		want  int64
	}{{false, 70 << 20}, {true, 40 << 20}} {
		tr, err := ParseTrace(strings.NewReader(trace(c.empty)))
		if err != nil {
			t.Fatal(err)
		}
		r := ReplayTrace(tr, TraceReplay{ComputeCapability: 90})
		if r.PeakReservedBytes != c.want || r.CacheReleases != 0 {
			t.Errorf("empty_cache %v: peak reserved %d, want %d; releases at the limit %d, want 0",
				c.empty, r.PeakReservedBytes, c.want, r.CacheReleases)
		}
	}
}

// TestUnusedGraphCategory: storages autograd saved (G) and freed
// outside its engine (U) are an unused graph, whatever the phase; saved
// ones a backward used are activations; the note names the frame that
// called the model.
func TestUnusedGraphCategory(t *testing.T) {
	const mib = 1 << 20
	trace := "torchmem-trace\t1\tdevice=meta\tsteps=1\n" +
		"S\t1\teval.py:40:<module>\n" +
		"S\t2\tmodel.py:12:forward\teval.py:30:evaluate\teval.py:40:<module>\n" +
		"P\tforward\t1\n" +
		"A\t1\t" + fmt.Sprint(100*mib) + "\tfwd\tforward\t1\t2\tnet\taten.addmm.default\tfloat32\t100\n" +
		"A\t2\t" + fmt.Sprint(50*mib) + "\tfwd\tforward\t1\t2\tnet\taten.gelu.default\tfloat32\t50\n" +
		"P\tbackward\t1\n" +
		"F\t2\n" + // used by the backward
		"A\t3\t" + fmt.Sprint(200*mib) + "\tfwd\tforward\t1\t2\tnet\taten.addmm.default\tfloat32\t200\n" +
		"U\t1\nF\t1\n" + // kept across the backward, dropped unused
		"U\t3\nF\t3\n" +
		"E\tsteps\t\t1\tdone\n"
	tr, err := ParseTrace(strings.NewReader(trace))
	if err != nil {
		t.Fatal(err)
	}
	cats := tr.categories()
	if cats[0] != CatUnusedGraph || cats[1] != CatActivations || cats[2] != CatUnusedGraph {
		t.Errorf("categories %v", cats[:3])
	}
	r := ReplayTrace(tr, TraceReplay{})
	u := r.UnusedGraph
	if u == nil || u.Bytes != 300*mib || u.Caller != "eval.py:30:evaluate" || u.Site.Where != "model.py:12:forward" {
		t.Fatalf("unused graph %+v", u)
	}
	// under no_grad the first storage goes once the next op made its
	// output: 100 + 50, then 200 alone, not 100 + 200
	e, _ := noGradWhatIf(tr)
	if e == nil || e.Events() != tr.Events() {
		t.Fatalf("no-grad what-if: %v", e)
	}
	if got := ReplayTrace(e, TraceReplay{}).LiveBytesPeak; got != 200*mib {
		t.Errorf("no-grad: live peak %d MiB, want 200 (the trace: %d)", got/mib, r.LiveBytesPeak/mib)
	}
	for frames, want := range map[string]string{
		"m.py:3:forward|torch/nn.py:1:_call_impl|e.py:9:sample_images|e.py:20:<module>": "e.py:9:sample_images",
		"m.py:3:forward|m.py:9:__call__":                                                "m.py:9:__call__",
		"":                                                                              "",
	} {
		var fs []string
		if frames != "" {
			fs = strings.Split(frames, "|")
		}
		if got := forwardCaller(fs); got != want {
			t.Errorf("forwardCaller(%q) = %q, want %q", frames, got, want)
		}
	}
}

// TestShapeRuleFromTrace: a datashape note's rule is the W line's sixth
// field as the tracer named it; a note without one was sized as the
// most it can be, whatever its words.
func TestShapeRuleFromTrace(t *testing.T) {
	head := "torchmem-trace\t1\tdevice=meta\ttorch=2.5.1\tsteps=1\nS\t1\ttrain.py:3:<module>\n"
	for line, want := range map[string]string{
		"W\tdatashape\tbincount\t1\tvalues taken as below its minlength 441: an output of that many counts\tminlength\n": ShapeMinLength,
		"W\tdatashape\tnonzero\t1\t32 of 4096 mask elements taken as true\tsampled\n":                                    ShapeSampled,
		"W\tdatashape\tnonzero\t1\ta balanced router's share, in words only\n":                                           ShapeMost,
	} {
		tr, err := ParseTrace(strings.NewReader(head + line))
		if err != nil {
			t.Fatal(err)
		}
		if len(tr.Warnings) != 1 || tr.Warnings[0].ShapeRule() != want {
			t.Errorf("%q: %+v, want rule %s", line, tr.Warnings, want)
		}
	}
}

// TestProbeEnd: a probe is a forward before an empty_cache() that comes
// after the peak and before the training's backward and first step; a
// program that empties the cache between its backward and its step has
// none.
func TestProbeEnd(t *testing.T) {
	head := "torchmem-trace\t1\tdevice=meta\ttorch=2.5.1\tsteps=1\nS\t1\ttrain.py:3:<module>\n" +
		"A\t1\t4000\tparam\tsetup\t1\t1\t\taten._to_copy.default\tfloat32\t1000\nP\tforward\t1\n" +
		"A\t2\t90000000\tfwd\tforward\t1\t1\tfc\taten.addmm.default\tfloat32\t1\n"
	probe := head + "R\nF\t2\nA\t3\t1000000\tfwd\tforward\t1\t1\tfc\taten.addmm.default\tfloat32\t1\n" +
		"P\tbackward\t1\nA\t4\t4000\tbwd\tbackward\t1\t1\t\taten.mm.default\tfloat32\t1\nF\t3\nP\toptimizer\t1\n"
	emptied := head + "P\tbackward\t1\nA\t3\t4000\tbwd\tbackward\t1\t1\t\taten.mm.default\tfloat32\t1\nF\t2\nR\n" +
		"P\toptimizer\t1\n"
	for name, c := range map[string]struct {
		trace string
		probe bool
	}{"probe": {probe, true}, "empty_cache before the step": {emptied, false}} {
		tr, err := ParseTrace(strings.NewReader(c.trace))
		if err != nil {
			t.Fatal(err)
		}
		r := ReplayTrace(tr, TraceReplay{ComputeCapability: 90})
		if got := probeEnd(tr, r.peakAt) > 0; got != c.probe {
			t.Errorf("%s: probe %v (peak at %d, phases %+v, emptied %v)", name, got, r.peakAt, tr.phases, tr.emptied)
		}
	}
}

// TestNoteCounts: the tracer's N line counts a kind's notes past its W
// lines (each site once); without one, the W lines are the count.
func TestNoteCounts(t *testing.T) {
	tr, err := ParseTrace(strings.NewReader("torchmem-trace\t1\tdevice=meta\ttorch=2.5.1\tsteps=1\n" +
		"S\t1\ttrain.py:3:<module>\nW\tdatashape\tnonzero\t1\tall 8 mask elements taken as true\n" +
		"W\tplaceholder\titem\t1\t0 was used\nN\tdatashape\t40\nE\tsteps\t\t1\tdone\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c := tr.NoteCounts(); c["datashape"] != 40 || c["placeholder"] != 1 {
		t.Errorf("counts %v, want datashape 40, placeholder 1", c)
	}
	if _, err := ParseTrace(strings.NewReader("torchmem-trace\t1\tdevice=meta\ttorch=2.5.1\tsteps=1\nN\tdatashape\tx\n")); err == nil {
		t.Error("a note count that is no number was taken")
	}
}

// TestTraceNCCLCommunicator: a process group over NCCL (named, or no
// backend named: NCCL for CUDA) adds one communicator's memory to the
// nvidia-smi figure and the breakdown, never to reserved; gloo and a
// launcher whose program made no group add nothing.
func TestTraceNCCLCommunicator(t *testing.T) {
	plain, err := ParseTrace(strings.NewReader(smallTrace))
	if err != nil {
		t.Fatal(err)
	}
	base := ReplayTrace(plain, TraceReplay{})
	for _, c := range []struct {
		dist string
		want int64
	}{
		{"D\tworld\t1\nD\tbackend\tnccl\n", ncclSmallWorldBytes},
		{"D\tworld\t2\nD\tbackend\tcuda:nccl,cpu:gloo\n", ncclSmallWorldBytes},
		{"D\tworld\t8\nD\tbackend\tdefault\n", ncclBytesPerComm},
		{"D\tworld\t8\nD\tbackend\tgloo\n", 0},
		{"D\tlauncher\ttorchrun 8\n", 0},
	} {
		// the D lines just after smallTrace's header line
		tr, err := ParseTrace(strings.NewReader(strings.Replace(smallTrace, "\n", "\n"+c.dist, 1)))
		if err != nil {
			t.Fatal(err)
		}
		r := ReplayTrace(tr, TraceReplay{})
		var item int64
		for _, it := range r.Breakdown {
			if it.Name == "nccl_communicator" {
				item = it.Bytes
			}
		}
		if r.PeakReservedBytes != base.PeakReservedBytes || r.ProcessBytes != base.ProcessBytes+c.want || item != c.want {
			t.Errorf("%q: process %d (alone %d), breakdown item %d, reserved %d (alone %d): want %d more in the process and the item",
				c.dist, r.ProcessBytes, base.ProcessBytes, item, r.PeakReservedBytes, base.PeakReservedBytes, c.want)
		}
	}
}
