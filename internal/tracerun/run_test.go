package tracerun

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/estimate"
	"github.com/torchmem/torchmem/internal/estimate/models"
)

// skipShort: the tracer's tests run real Python programs under torch, a few
// seconds each; go test -short leaves them to the full suite.
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: traces real Python programs (the full suite runs it)")
	}
}

// torchPython is Debian's /usr/bin/python3 when it has torch (CI installs
// python3-torch); tests skip otherwise. A pyenv shim on PATH often has no torch.
func torchPython(t *testing.T) string {
	t.Helper()
	skipShort(t)
	for _, p := range []string{os.Getenv("TORCHMEM_TORCH_PYTHON"), "/usr/bin/python3", "python3"} {
		if p == "" {
			continue
		}
		if exec.Command(p, "-c", "import torch").Run() == nil {
			return p
		}
	}
	t.Skip("no python3 with torch (apt install python3-torch): the tracer's tests need one")
	return ""
}

func trace(t *testing.T, py, device string, args ...string) *estimate.Trace {
	t.Helper()
	var out strings.Builder
	tr, err := Run(context.Background(), Options{Argv: append([]string{py}, args...), Device: device, Output: &out})
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", device, args, err, out.String())
	}
	if tr.End == nil || tr.End.Kind != "steps" {
		t.Fatalf("%s %v: the trace ended with %+v, want 2 optimizer steps\n%s", device, args, tr.End, out.String())
	}
	return tr
}

// allocations: the sizes of every allocation by category, sorted.
func allocations(tr *estimate.Trace) []string {
	out := estimate.TraceCategorySizes(tr)
	sort.Strings(out)
	return out
}

// TestMetaAgreesWithRealTensors: the same script traced with real CPU
// tensors and with meta tensors (shapes only) allocates the same storages
// of the same sizes in the same categories, and reaches the same live-bytes
// and allocated peaks. Models: an MLP, a CNN with BatchNorm, a transformer
// with attention and a custom autograd Function, GPT-2 with dropout and a
// tied embedding (testdata/).
func TestMetaAgreesWithRealTensors(t *testing.T) {
	py := torchPython(t)
	for _, s := range metaRealScripts {
		t.Run(s, func(t *testing.T) { checkMetaAgreesWithReal(t, py, s) })
	}
}

// metaRealScripts: the programs (testdata/, with arguments) that
// TestMetaAgreesWithRealTensors traces in both modes (boolmask.py: a
// boolean-mask index, sized on meta as every element, which it is there;
// uniquenms.py: torch.unique and torchvision nms, every element distinct
// and every box kept, as there).
var metaRealScripts = []string{"mlp.py", "cnn.py", "transformer.py", "gpt2.py 1 64 4 200 2 32", "boolmask.py", "uniquenms.py",
	"moe_routes.py 64 32 8 2 minimind", "moe_routes.py 64 32 8 2 deepseek", "moe_routes.py 64 32 8 2 dropless",
	"moe_routes.py 64 32 8 2 granite", "knownvalues.py", "evalgraph.py grad 256", "clip_foreach.py none", "clip_foreach.py true"}

// deviceSeen: allocations(tr) but for those a trace on CPU tensors cannot
// see (cpuBlind), in both modes alike.
func deviceSeen(tr *estimate.Trace) []string {
	all := estimate.TraceCategorySizes(tr)
	var out []string
	for i, a := range tr.Allocs {
		if !cpuBlind(a) {
			out = append(out, all[i])
		}
	}
	sort.Strings(out)
	return out
}

// cpuBlind: a storage that a GPU, and the meta trace, allocates on the
// device but a trace on real CPU tensors cannot tell from a host tensor:
// made inside an op with no tensor input that says its device. topk's and
// a boolean index's backward start from at::zeros(sizes, grad.options());
// repeat_interleave by an int makes its repeats with at::tensor (an
// 8-byte empty) and then their int64 index (moe_routes.py). The peaks
// still agree to the byte.
func cpuBlind(a estimate.TraceAlloc) bool {
	switch a.Op {
	case "aten.zeros.default":
		return a.Phase == "backward"
	case "aten.empty.memory_format":
		return a.Bytes == 8 && a.Shape == "1"
	case "aten.repeat_interleave.Tensor":
		return true
	}
	return false
}

// countDiff lists the entries two lists hold a different number of times.
func countDiff(a, b []string) string {
	n := map[string][2]int{}
	for _, x := range a {
		c := n[x]
		c[0]++
		n[x] = c
	}
	for _, x := range b {
		c := n[x]
		c[1]++
		n[x] = c
	}
	var out []string
	for k, c := range n {
		if c[0] != c[1] {
			out = append(out, fmt.Sprintf("%s meta×%d real×%d", k, c[0], c[1]))
		}
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

func checkMetaAgreesWithReal(t *testing.T, py, s string) {
	t.Helper()
	args := strings.Fields(s)
	args[0] = filepath.Join("testdata", args[0])
	meta, real := trace(t, py, "meta", args...), trace(t, py, "cpu", args...)
	rm, rr := estimate.ReplayTrace(meta, estimate.TraceReplay{}), estimate.ReplayTrace(real, estimate.TraceReplay{})
	am, ar := deviceSeen(meta), deviceSeen(real)
	if strings.Join(am, " ") != strings.Join(ar, " ") {
		t.Errorf("allocations differ (kind:bytes meta×n real×m): %s", countDiff(am, ar))
	}
	if rm.LiveBytesPeak != rr.LiveBytesPeak || rm.PeakAllocatedBytes != rr.PeakAllocatedBytes {
		t.Errorf("peaks differ: meta live %d allocated %d, real live %d allocated %d",
			rm.LiveBytesPeak, rm.PeakAllocatedBytes, rr.LiveBytesPeak, rr.PeakAllocatedBytes)
	}
	if rm.Steps != 2 || len(am) < 20 {
		t.Errorf("%d steps, %d allocations: want 2 steps of a real model", rm.Steps, len(am))
	}
	t.Logf("%s: %d allocations, live peak %d B, allocated peak %d B, reserved %d B (%s), both modes",
		s, len(am), rm.LiveBytesPeak, rm.PeakAllocatedBytes, rm.PeakReservedBytes, rm.PeakPhase)
}

// TestTraceAgreesWithBuiltinGPT2: GPT-2 written in plain torch as Hugging
// Face builds it (testdata/gpt2.py), traced, and the built-in estimator's
// walk of the same config (2 layers, 128 wide, 4 heads, vocabulary 1000,
// batch 8 x 128 tokens, fp32, AdamW foreach, eager attention) agree within
// 2% on the peak allocated. Two differences of the meta device that the
// tracer corrects make up most of what they disagreed by at first: CUDA's
// fused dropout saves a one-byte mask where meta and CPU save a float
// noise tensor, and cuBLAS's workspaces (64 MiB on sm90) exist only on a GPU.
func TestTraceAgreesWithBuiltinGPT2(t *testing.T) {
	checkGPT2AgreesWithBuiltin(t, torchPython(t), "fp32", "eager")
}

// checkGPT2AgreesWithBuiltin: testdata/gpt2.py (2 layers, 128 wide, 4
// heads, vocabulary 1000, batch 8 x 128, AdamW foreach) traced on meta for
// an sm90 GPU and the built-in estimate of the same config agree within 2%
// on the peak allocated.
func checkGPT2AgreesWithBuiltin(t *testing.T, py, precision, attention string) (got *estimate.TraceResult, want *estimate.Result) {
	t.Helper()
	tr := trace(t, py, "meta", filepath.Join("testdata", "gpt2.py"), "2", "128", "4", "1000", "8", "128", "foreach", precision, attention)
	got = estimate.ReplayTrace(tr, estimate.TraceReplay{ComputeCapability: 90})
	md, err := models.FromConfigMap(map[string]any{"model_type": "gpt2", "architectures": []any{"GPT2LMHeadModel"},
		"vocab_size": 1000.0, "n_positions": 128.0, "n_embd": 128.0, "n_layer": 2.0, "n_head": 4.0,
		"activation_function": "gelu_new", "resid_pdrop": 0.1, "embd_pdrop": 0.1, "attn_pdrop": 0.1})
	if err != nil {
		t.Fatal(err)
	}
	want, err = estimate.Estimate(md, estimate.Options{Batch: 8, Seq: 128, Precision: precision, Optimizer: "adamw",
		OptimizerImpl: "foreach", Attention: attention, ComputeCapability: 90})
	if err != nil {
		t.Fatal(err)
	}
	diff := float64(got.PeakAllocatedBytes-want.PeakAllocatedBytes) / float64(want.PeakAllocatedBytes)
	t.Logf("%s %s peak allocated: trace %d B (%s), built-in %d B (%s): %+.2f%%; reserved %d vs %d; params %d vs %d",
		precision, attention, got.PeakAllocatedBytes, got.PeakPhase, want.PeakAllocatedBytes, want.PeakPhase, 100*diff,
		got.PeakReservedBytes, want.PeakReservedBytes, got.Params, want.Params)
	if diff < -0.02 || diff > 0.02 {
		t.Errorf("trace and built-in disagree by %+.2f%% on the peak allocated", 100*diff)
	}
	if got.Params != want.Params {
		t.Errorf("parameters: trace %d, built-in %d (the tied embedding counts once)", got.Params, want.Params)
	}
	return got, want
}

// TestUntraceableSaysWhere: a data-dependent op stops the trace; the end
// names the op and the program's line, the step traced before is kept, and
// the .item() read before it is a warning with its line.
func TestUntraceableSaysWhere(t *testing.T) {
	py := torchPython(t)
	var out strings.Builder
	tr, err := Run(context.Background(), Options{Argv: []string{py, filepath.Join("testdata", "untraceable.py")}, Output: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	e := tr.End
	if e == nil || e.Kind != "error" || e.Op != "aten.bincount.default" || len(e.Where) == 0 ||
		!strings.HasSuffix(e.Where[0], "untraceable.py:12:<module>") {
		t.Fatalf("end %+v\n%s", e, out.String())
	}
	if len(tr.Warnings) != 1 || tr.Warnings[0].Op != "item" || !strings.Contains(tr.Warnings[0].Where[0], "untraceable.py:10:") {
		t.Errorf("warnings %+v", tr.Warnings)
	}
	r := estimate.ReplayTrace(tr, estimate.TraceReplay{})
	if r.Steps != 1 || r.PeakAllocatedBytes == 0 {
		t.Errorf("steps %d, peak %d: the step before the failure should be kept", r.Steps, r.PeakAllocatedBytes)
	}
}

// TestStdlibErrorSaysProgramLine: an exception raised inside Python's
// standard library (json's decoder here; urllib for a download offline)
// ends the trace at the program's line that called it, not the library's.
func TestStdlibErrorSaysProgramLine(t *testing.T) {
	py := torchPython(t)
	var out strings.Builder
	tr, err := Run(context.Background(), Options{Argv: []string{py, filepath.Join("testdata", "stdliberror.py")}, Output: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	e := tr.End
	if e == nil || e.Kind != "error" || len(e.Where) == 0 || !strings.HasSuffix(e.Where[0], "stdliberror.py:13:<module>") ||
		!strings.Contains(e.Message, "JSONDecodeError") {
		t.Fatalf("end %+v\n%s", e, out.String())
	}
}

// TestLayersCalledAloneFirst: layers the program called one by one before
// calling their model keep no names of their own (lin, act, Block): the
// training forward's memory is named from the model (model.1.lin).
func TestLayersCalledAloneFirst(t *testing.T) {
	py := torchPython(t)
	var out strings.Builder
	tr, err := Run(context.Background(), Options{Argv: []string{py, filepath.Join("testdata", "layerwise.py")}, Output: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	seen := map[string]bool{}
	for _, a := range tr.Allocs {
		if a.Phase == "forward" && a.Step == 2 {
			seen[a.Module] = true
		}
	}
	for _, want := range []string{"model.0.lin", "model.1.lin", "model.2.act"} {
		if !seen[want] {
			t.Errorf("no forward allocation of step 2 in %s; modules %v", want, seen)
		}
	}
	for m := range seen {
		if m != "" && !strings.HasPrefix(m, "model.") { // "": outside any module (the loss)
			t.Errorf("step 2's forward allocates in %q, a name from a layer called alone", m)
		}
	}
}

// TestApplyClassifiesWeightsAndBuffers: what Module._apply moves to the GPU
// and casts there (.cuda().half()) is weights and buffers from the first
// byte, on meta and on CPU tensors alike, the fp32 copies the cast frees
// included (they were "input data" before: nothing classified them while
// they lived).
func TestApplyClassifiesWeightsAndBuffers(t *testing.T) {
	py := torchPython(t)
	for _, dev := range []string{"meta", "cpu"} {
		var out strings.Builder
		tr, err := Run(context.Background(), Options{Argv: []string{py, filepath.Join("testdata", "castmodel.py")},
			Device: dev, Output: &out})
		if err != nil {
			t.Fatalf("%s: %v\n%s", dev, err, out.String())
		}
		kinds := map[string]int{}
		for _, a := range tr.Allocs {
			kinds[a.Kind]++
		}
		// fp32 weight, bias, running_mean, running_var, num_batches_tracked
		// (int64, not cast), then the half copies of all but the last.
		if len(kinds) != 2 || kinds["param"] != 8 || kinds["buffer"] != 5 {
			t.Errorf("%s: allocations by kind %v, want 8 param and 5 buffer", dev, kinds)
		}
	}
}

// TestGivingUpIsNotAnEnd: a script that exits non-zero on its own
// (sys.exit("no dataset ...") before training, the common way a script
// gives up) is a trace that stopped short, not a program that ran all it
// does; one that exits 0 is. Both load a model first, so both have a peak.
func TestGivingUpIsNotAnEnd(t *testing.T) {
	py := torchPython(t)
	dir := t.TempDir()
	for _, c := range []struct {
		exit, kind, msg string
	}{
		{`sys.exit("no dataset found at ./data")`, "failed", "exit status 1"},
		{`sys.exit(3)`, "failed", "exit status 3"},
		{`sys.exit(0)`, "exit", ""},
	} {
		script := filepath.Join(dir, "give_up.py")
		src := "import sys, torch\nm = torch.nn.Linear(64, 64).cuda()\n" + c.exit + "\n"
		if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		tr, err := Run(context.Background(), Options{Argv: []string{py, script}, Output: &out})
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.exit, err, out.String())
		}
		if tr.End == nil || tr.End.Kind != c.kind || (c.msg != "" && tr.End.Message != c.msg) {
			t.Errorf("%s: end %+v, want kind %q %q", c.exit, tr.End, c.kind, c.msg)
		}
		r := estimate.ReplayTrace(tr, estimate.TraceReplay{})
		if got, want := estimate.TracePartial(tr, r), c.kind == "failed"; got != want {
			t.Errorf("%s: partial %v, want %v", c.exit, got, want)
		}
	}
}

// TestStepsAreIterations: a second optimizer.step() on the same gradients
// (two optimizers over one backward; one optimizer stepped twice) is the
// same training iteration, so --steps 2 traces two forward passes, the
// second with the optimizer's states made; before, the trace stopped after
// the first iteration and missed that peak.
func TestStepsAreIterations(t *testing.T) {
	py := torchPython(t)
	for _, mode := range []string{"two", "twice"} {
		tr := trace(t, py, "meta", filepath.Join("testdata", "twostep.py"), mode)
		forward := map[int]bool{}
		for _, a := range tr.Allocs {
			if a.Phase == "forward" {
				forward[a.Step] = true
			}
		}
		if !forward[1] || !forward[2] || forward[3] {
			t.Errorf("%s: forward passes traced in steps %v, want 1 and 2", mode, forward)
		}
	}
}

// TestMixtureOfExpertsRouting: testdata/moe.py routes tokens as
// transformers' Mixtral block does, through data-dependent shapes meta
// tensors have no values for (nonzero, torch.where). The trace takes a
// balanced router's counts: each expert gathers tokens*top_k/experts rows;
// the experts hit are all of them, with their indices known, so the loop
// runs every expert (not expert 0 each time) and every expert's weights
// get AdamW states; the notes name the router rule.
func TestMixtureOfExpertsRouting(t *testing.T) {
	py := torchPython(t)
	const tokens, hidden, experts, topK = 64, 32, 8, 2
	tr := trace(t, py, "meta", filepath.Join("testdata", "moe.py"), "64", "32", "8", "2")
	gathers := 0
	rows := fmt.Sprintf("1,%d,%d", tokens*topK/experts, hidden) // x[None, top_x]
	for _, a := range tr.Allocs {
		if a.Op == "aten.index.Tensor" && a.Shape == rows && a.Step == 1 {
			gathers++
		}
	}
	params, _ := kindBytes(tr, "param", 0)
	if states, _ := kindBytes(tr, "optstate", 0); states != 2*params {
		t.Errorf("AdamW states %d B for %d B of weights: want twice (every expert ran)", states, params)
	}
	if gathers != experts {
		t.Errorf("%d gathers of shape %s in step 1, want one per expert (%d)", gathers, rows, experts)
	}
	shapes := 0
	for _, w := range tr.Warnings {
		if w.Kind == "datashape" && w.ShapeRule() == estimate.ShapeRouter {
			shapes++
		}
	}
	if shapes == 0 {
		t.Errorf("no datashape note of the router rule for the assumed nonzero sizes: %+v", tr.Warnings)
	}
}

// TestSelectedValuesLoopPerValue: testdata/levels.py loops over
// torch.unique of feature-level ids picked by a model's top-k, as
// torchvision's batched_nms does. The ids are drawn from 5 known values,
// so the trace makes 5 passes of top_k / 5 rows (torch.where of each
// level), not one per proposal (every element distinct).
func TestSelectedValuesLoopPerValue(t *testing.T) {
	tr := trace(t, torchPython(t), "meta", filepath.Join("testdata", "levels.py"))
	passes := map[string]int{}
	for _, a := range tr.Allocs {
		if a.Op == "aten.nonzero.default" && a.Step == 1 {
			passes[a.Shape]++
		}
	}
	if len(passes) != 1 || passes["200,1"] != 5 {
		t.Errorf("torch.where passes in step 1 by shape: %v, want 5 of 200 rows", passes)
	}
}

// TestLeftoverProcessesStopped: a program that leaves a process holding
// its output (Python 3.14's forkserver for DataLoader workers) made the
// trace wait for it after the steps were traced; the trace ends with the
// program now, and the process it left is killed.
func TestLeftoverProcessesStopped(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	trace(t, torchPython(t), "meta", filepath.Join("testdata", "leftover.py"), pidFile)
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	for i := 0; i < 50 && pid > 0 && syscall.Kill(pid, 0) == nil; i++ {
		time.Sleep(100 * time.Millisecond) // the kill is delivered; the zombie goes with init
	}
	if pid <= 0 || syscall.Kill(pid, 0) == nil {
		if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && !strings.Contains(string(st), ") Z ") {
			t.Errorf("the process the program left (pid %d) still runs", pid)
		}
	}
}

// TestGenerationStops: testdata/generate.py, a greedy generation loop with
// transformers' stopping criteria, ends by itself on meta after exactly
// max_new_tokens tokens (its own assert), with the allocations and peaks
// of the real-tensor run. The end-of-sequence test reads tokens without
// data; before, its placeholder False kept the loop running until the
// trace's timeout killed it.
func TestGenerationStops(t *testing.T) {
	py := torchPython(t)
	args := []string{filepath.Join("testdata", "generate.py"), "4", "8", "16"}
	run := func(device string) *estimate.Trace {
		var out strings.Builder
		// (a minute: it takes seconds, and a loop that does not stop is the failure)
		tr, err := Run(context.Background(), Options{Argv: append([]string{py}, args...), Device: device, Output: &out,
			Timeout: time.Minute})
		if err != nil || tr.End == nil || tr.End.Kind != "exit" {
			t.Fatalf("%s: %v, the trace ended with %+v, want the program's own end\n%s", device, err, tr.End, out.String())
		}
		return tr
	}
	meta, real := run("meta"), run("cpu")
	// (the same allocations; `unfinished`, made with device=ids.device,
	// counts as input data in cpu mode and a temporary on meta)
	rm, rr := estimate.ReplayTrace(meta, estimate.TraceReplay{}), estimate.ReplayTrace(real, estimate.TraceReplay{})
	if len(deviceSeen(meta)) != len(deviceSeen(real)) || rm.LiveBytesPeak != rr.LiveBytesPeak ||
		rm.PeakAllocatedBytes != rr.PeakAllocatedBytes {
		t.Errorf("meta: %d allocations, live peak %d B, allocated %d B; real: %d, %d B, %d B",
			len(deviceSeen(meta)), rm.LiveBytesPeak, rm.PeakAllocatedBytes, len(deviceSeen(real)), rr.LiveBytesPeak, rr.PeakAllocatedBytes)
	}
}

// TestEmptyCacheReleases: the program's torch.cuda.empty_cache() is in the
// trace, and the replay gives the cached segments back there: a 30 MiB
// tensor freed, the cache emptied, a 40 MiB one made reserves 40 MiB, 70
// without the call (testdata/empty_cache.py).
func TestEmptyCacheReleases(t *testing.T) {
	py := torchPython(t)
	for _, c := range []struct {
		args []string
		want int64
	}{{nil, 40 << 20}, {[]string{"keep"}, 70 << 20}} {
		var out strings.Builder
		argv := append([]string{py, filepath.Join("testdata", "empty_cache.py")}, c.args...)
		tr, err := Run(context.Background(), Options{Argv: argv, Output: &out})
		if err != nil {
			t.Fatalf("%v: %v\n%s", c.args, err, out.String())
		}
		if r := estimate.ReplayTrace(tr, estimate.TraceReplay{ComputeCapability: 90}); r.PeakReservedBytes != c.want {
			t.Errorf("%v: peak reserved %d, want %d", c.args, r.PeakReservedBytes, c.want)
		}
	}
}

// TestDeviceParsesAsGPU: x.to(w.device) for a device tensor w parses as
// the GPU (packed_to.py: a parameter that quantizes only off meta, as
// bitsandbytes' Params4bit does), and torch._C._cuda_getCurrentRawStream
// is there for an extension to read on a CPU build. Both modes.
func TestDeviceParsesAsGPU(t *testing.T) {
	py := torchPython(t)
	for _, dev := range []string{"meta", "cpu"} {
		var out strings.Builder
		tr, err := Run(context.Background(), Options{Argv: []string{py, filepath.Join("testdata", "packed_to.py")},
			Device: dev, Output: &out})
		if err != nil {
			t.Fatalf("%s: %v\n%s", dev, err, out.String())
		}
		if tr.End == nil || tr.End.Kind != "exit" {
			t.Errorf("%s: end %+v, want the program's own exit\n%s", dev, tr.End, out.String())
		}
	}
}

// streamsTo traces testdata's script, which ends by itself with no
// optimizer step, and gives the stream of each allocation in order.
func streamsTo(t *testing.T, py, dev, script string) (*estimate.Trace, []int32) {
	t.Helper()
	var out strings.Builder
	tr, err := Run(context.Background(), Options{Argv: []string{py, filepath.Join("testdata", script)},
		Device: dev, Output: &out})
	if err != nil {
		t.Fatalf("%s: %v\n%s", dev, err, out.String())
	}
	if tr.End == nil || tr.End.Kind != "exit" {
		t.Fatalf("%s: end %+v, want the program's own exit\n%s", dev, tr.End, out.String())
	}
	var streams []int32
	for _, a := range tr.Allocs {
		streams = append(streams, a.Stream)
	}
	return tr, streams
}

// TestSideStreams: what a program allocates on a side stream is written
// under the stream's number (torch.cuda.Stream()s numbered as torch's
// pools hand them out: the first low-priority one 1, the first
// high-priority one 33), and the replay keeps each stream's freed blocks
// for it (testdata/side_stream.py). Both modes.
func TestSideStreams(t *testing.T) {
	py := torchPython(t)
	for _, dev := range []string{"meta", "cpu"} {
		tr, streams := streamsTo(t, py, dev, "side_stream.py")
		if fmt.Sprint(streams) != "[1 33 1 0]" {
			t.Errorf("%s: streams %v, want [1 33 1 0]", dev, streams)
		}
		if r := estimate.ReplayTrace(tr, estimate.TraceReplay{ComputeCapability: 90}); r.PeakReservedBytes != 100<<20 {
			t.Errorf("%s: peak reserved %d, want 100 MiB", dev, r.PeakReservedBytes)
		}
	}
}

// TestStreamPerThread: the current stream is each thread's: a thread
// inside torch.cuda.stream(s) leaves the main thread's allocation on the
// default stream, so the main thread's later tensor on s shares the
// thread's segment and not its own freed one: 40 MiB reserved, 20 had the
// stream been one for the process (testdata/stream_thread.py).
func TestStreamPerThread(t *testing.T) {
	py := torchPython(t)
	for _, dev := range []string{"meta", "cpu"} {
		tr, streams := streamsTo(t, py, dev, "stream_thread.py")
		if fmt.Sprint(streams) != "[0 1 1]" {
			t.Errorf("%s: streams %v, want [0 1 1]", dev, streams)
		}
		r := estimate.ReplayTrace(tr, estimate.TraceReplay{ComputeCapability: 90})
		if r.PeakReservedBytes != 40<<20 || r.PeakAllocatedBytes != 8<<20 {
			t.Errorf("%s: peak allocated %d, reserved %d, want 8 and 40 MiB", dev, r.PeakAllocatedBytes, r.PeakReservedBytes)
		}
	}
}

// TestPrefetchThread: the batches a thread the program started moves to
// the GPU (a CUDA prefetcher) are traced, as input data, whatever the
// model's thread is in meanwhile; the trace reaches its steps with
// DataLoader's pin-memory thread traced too, what it receives from the
// workers on the host (testdata/prefetch_thread.py).
func TestPrefetchThread(t *testing.T) {
	py := torchPython(t)
	for _, dev := range []string{"meta", "cpu"} {
		tr := trace(t, py, dev, filepath.Join("testdata", "prefetch_thread.py"))
		batches := map[string]int{}
		for _, a := range tr.Allocs {
			if a.Shape == "32,3,32,32" || a.Shape == "32" {
				batches[a.Kind+" "+a.Shape]++
			}
			if strings.HasPrefix(a.Op, "aten.set_") {
				// the pin-memory thread's batch from a worker, taken for
				// GPU memory while the main thread was inside a .cuda()
				t.Errorf("%s: a host batch recorded: %+v", dev, a)
			}
		}
		// every batch the steps used, one or two ahead of them
		if n := batches["data 32,3,32,32"]; n < 3 || n != batches["data 32"] || len(batches) != 2 {
			t.Errorf("%s: batches moved %v, want each as input data, at least 3", dev, batches)
		}
	}
}

// TestCaughtFailureIsNotTheEnd: an op that failed inside a try the
// program went on from is not why the trace ended; the program's own
// later error is (testdata/swallowed.py, meta mode).
func TestCaughtFailureIsNotTheEnd(t *testing.T) {
	py := torchPython(t)
	var out strings.Builder
	tr, err := Run(context.Background(), Options{Argv: []string{py, filepath.Join("testdata", "swallowed.py")}, Output: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	e := tr.End
	if e == nil || e.Kind != "error" || e.Op != "" || !strings.Contains(e.Message, "ValueError: dataset too small") ||
		len(e.Where) == 0 || !strings.HasSuffix(e.Where[0], "swallowed.py:13:<module>") {
		t.Fatalf("end %+v, want the program's ValueError at line 13\n%s", e, out.String())
	}
}

// TestJitTraceOnTheHost: torch.jit.trace of the host model (TensorBoard's
// add_graph) before training: in meta mode it cannot run and returns the
// module, said once (jittrace), and the program trains on; the steps reach
// the peaks of the run on real tensors, where jit.trace runs on the host
// and holds nothing on the GPU (testdata/jit_graph.py).
func TestJitTraceOnTheHost(t *testing.T) {
	py := torchPython(t)
	script := filepath.Join("testdata", "jit_graph.py")
	meta := bothModes(t, py, script)
	var notes []string
	for _, w := range meta.Warnings {
		notes = append(notes, w.Kind+" "+w.Op)
	}
	if strings.Join(notes, ",") != "jittrace trace" {
		t.Errorf("meta notes %v, want one jittrace of torch.jit.trace", notes)
	}
}

// TestConfusionMatrix: bincount(n*t+p, minlength=n*n) in an evaluation
// between steps is sized minlength on meta, said as the minlength rule,
// and reaches the peaks of the run on real tensors
// (testdata/confusion.py).
func TestConfusionMatrix(t *testing.T) {
	py := torchPython(t)
	script := filepath.Join("testdata", "confusion.py")
	meta := bothModes(t, py, script)
	rules := map[string]bool{}
	for _, w := range meta.Warnings {
		if w.Kind == "datashape" && w.Op == "bincount" {
			rules[w.ShapeRule()] = true
		}
	}
	if !rules[estimate.ShapeMinLength] {
		t.Errorf("warnings %+v: want bincount sized by its minlength", meta.Warnings)
	}
}

// TestRaisingForwardIsLeft: a forward that raised (caught by the program)
// is left: the training after it is not said to be in the raising
// modules (testdata/raising_forward.py; torch >= 2.1, whose forward hooks
// may be called on a raise).
func TestRaisingForwardIsLeft(t *testing.T) {
	py := torch2Python(t)
	tr := trace(t, py, "meta", filepath.Join("testdata", "raising_forward.py"))
	for _, a := range tr.Allocs {
		if a.Module != "" && a.Module != "Linear" {
			t.Errorf("allocation %d (%s) said to be in module %q", a.ID, a.Op, a.Module)
		}
	}
}

// TestLoadedCheckpoint: a state dict torch.load put on the GPU and kept is
// torch.load's in the breakdown (what load-to-host saves); a pickled
// module's loaded tensors are its weights. Both modes alike
// (testdata/loaded_ckpt.py).
func TestLoadedCheckpoint(t *testing.T) {
	py := torchPython(t)
	dir := t.TempDir()
	save := fmt.Sprintf("import torch; m = torch.nn.Linear(1024, 1024); torch.save(m.state_dict(), %q); torch.save(m, %q)",
		filepath.Join(dir, "sd.pt"), filepath.Join(dir, "model.pt"))
	if out, err := exec.Command(py, "-c", save).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	script := filepath.Join("testdata", "loaded_ckpt.py")
	meta := trace(t, py, "meta", script, dir)
	cpu := trace(t, py, "cpu", script, dir)
	samePeaks(t, meta, cpu)
	const sd = 1024*1024*4 + 1024*4
	for dev, tr := range map[string]*estimate.Trace{"meta": meta, "cpu": cpu} {
		var loaded, weights int64
		for _, a := range tr.Allocs {
			switch a.Kind {
			case "loaded":
				loaded += a.Bytes
			case "param":
				weights += a.Bytes
			}
		}
		if loaded != sd || weights < 2*sd {
			t.Errorf("%s: torch.load's %d B (want the kept state dict's %d), weights %d B (want both models', %d)",
				dev, loaded, sd, weights, 2*sd)
		}
	}
	r := estimate.ReplayTrace(meta, estimate.TraceReplay{})
	if it := breakdownItem(r.Result, "torch_load"); it < sd {
		t.Errorf("breakdown torch_load %d B at the peak, want %d", it, sd)
	}
}

func breakdownItem(r *estimate.Result, name string) int64 {
	for _, it := range r.Breakdown {
		if it.Name == name {
			return it.Bytes
		}
	}
	return 0
}

// TestHostForwardIsNoGPUForward: a forward on the host model before
// .cuda() begins no forward phase (the weights are moved in setup, the
// cuBLAS workspace comes with the first forward on the GPU): the trace
// with it reserves what the trace without it does, both modes
// (testdata/host_forward.py; bubbliiiing's yolov4 with its add_graph
// reserved 94 MiB more before).
func TestHostForwardIsNoGPUForward(t *testing.T) {
	py := torchPython(t)
	script := filepath.Join("testdata", "host_forward.py")
	for _, dev := range []string{"meta", "cpu"} {
		tr := trace(t, py, dev, script)
		for _, a := range tr.Allocs {
			if a.Kind == "param" && a.Phase != "setup" {
				t.Errorf("%s: a weight moved to the GPU in phase %q, want setup (no forward on the GPU yet)", dev, a.Phase)
			}
		}
		with := estimate.ReplayTrace(tr, estimate.TraceReplay{ComputeCapability: 90})
		without := estimate.ReplayTrace(trace(t, py, dev, script, "skip"), estimate.TraceReplay{ComputeCapability: 90})
		if with.PeakReservedBytes != without.PeakReservedBytes || with.PeakAllocatedBytes != without.PeakAllocatedBytes {
			t.Errorf("%s: with the host forward %d / %d B, without %d / %d B", dev, with.PeakAllocatedBytes,
				with.PeakReservedBytes, without.PeakAllocatedBytes, without.PeakReservedBytes)
		}
	}
}

// TestSampledMasks: a detector's sampled masks (1 put at 512 indices of
// 6,000) hold at most as many true elements as indices put, so
// torch.where finds 512 rows on meta as on real tensors, not 6,000; a mask
// also written another way (through a view) is all true again, not the
// 128 put in it; the notes say which rule sized which (testdata/sampler.py; WZMIAOMIAO's
// Faster R-CNN on meta went from twice its CPU-tensor peak to within
// 0.01 %).
func TestSampledMasks(t *testing.T) {
	py := torchPython(t)
	meta := bothModes(t, py, filepath.Join("testdata", "sampler.py"))
	rules := map[string]int{}
	for _, w := range meta.Warnings {
		if w.Kind == "datashape" {
			rules[w.ShapeRule()]++
		}
	}
	if rules[estimate.ShapeSampled] == 0 || rules[estimate.ShapeMost] == 0 {
		t.Errorf("warnings %+v: want the sampled rule, and the mask written another way taken as all true", meta.Warnings)
	}
}
