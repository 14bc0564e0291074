package tracerun

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/estimate"
)

// Regressions from sweeping public training scripts through the tracer
// (pytorch/examples, timm, torchvision's references, nanoGPT, minGPT; see
// bench/results/trace-real-scripts.md). Each testdata script is torchmem's
// own minimal reproduction of what broke, not the scripts' code.

// TestRealScriptAPIs: a loop using what those scripts ask of the GPU besides
// tensors (DataParallel, cuda Events and streams, GradScaler, RNG state,
// memory_stats, a DataLoader worker with pinned memory, a checkpoint saved
// and loaded onto the GPU, .cpu().numpy() and f-string reads) traces two
// optimizer steps on meta and on real CPU tensors, with the same peaks.
// Before the fix it stopped at the first of them. (The allocations are not
// compared one by one: the meta torch.load records a loaded storage, frees
// it and records it again when its tensor is rebuilt, never two at once.)
func TestRealScriptAPIs(t *testing.T) {
	py := torchPython(t)
	ckpt := filepath.Join(t.TempDir(), "ckpt.pt")
	args := []string{filepath.Join("testdata", "scriptapi.py"), "16", ckpt}
	meta, real := trace(t, py, "meta", args...), trace(t, py, "cpu", args...)
	samePeaks(t, meta, real)
	// the meta run read values it does not have, and said so
	if len(meta.Warnings) == 0 {
		t.Errorf("meta: no placeholder warnings for .item()/.numpy()/f-string reads")
	}
}

// TestShapeFallbacks113: the ops torch 1.13 has no meta kernel for that
// segmentation, detection, style-transfer and video scripts use (padding
// and adaptive-pooling backwards, 3-D max pooling, grid_sample's backward,
// nll_loss2d, smooth L1's backward) are done by shape, allocating what the
// real kernels allocate.
func TestShapeFallbacks113(t *testing.T) {
	py := torchPython(t)
	args := []string{filepath.Join("testdata", "shapeops.py"), "4"}
	agree(t, trace(t, py, "meta", args...), trace(t, py, "cpu", args...))
}

// TestHostForwardAndChecks: YOLOv5's train.py stopped before its first
// step: a forward of zeros on the host at construction mixed the weights
// the tracer keeps as meta placeholders with real host tensors (now lifted
// to meta with their values), and its AMP self-check (torch.allclose of
// float32 and autocast outputs) raised on meta, so it trained without
// mixed precision. Checks of tensors without data now pass, as on a GPU
// (allclose, equal, isfinite), each said; meta and cpu agree.
func TestHostForwardAndChecks(t *testing.T) {
	py := torchPython(t)
	args := []string{filepath.Join("testdata", "hostfirst.py"), "8"}
	meta := trace(t, py, "meta", args...)
	agree(t, meta, trace(t, py, "cpu", args...))
	checks := map[string]bool{}
	for _, w := range meta.Warnings {
		if w.Kind == "check" {
			checks[w.Op] = true
		}
	}
	for _, op := range []string{"allclose", "equal", "isfinite"} {
		if !checks[op] {
			t.Errorf("meta: no check note for %s (notes %+v)", op, meta.Warnings)
		}
	}
}

// TestClosureStep: optimizer.step(closure) runs the forward and backward
// inside the step (Lightning's automatic optimization, LBFGS); they were
// all "optimizer temporaries". Now the closure's tensors are the model's
// (activations made in the forward, gradients), the momentum buffers the
// optimizer's states; meta and cpu agree for SGD (LBFGS decides its
// inner iterations from the loss's values, which meta does not have).
func TestClosureStep(t *testing.T) {
	py := torchPython(t)
	for _, mode := range []string{"sgd", "lbfgs"} {
		t.Run(mode, func(t *testing.T) {
			args := []string{filepath.Join("testdata", "closure_step.py"), "32", mode}
			meta := trace(t, py, "meta", args...)
			if mode == "sgd" {
				agree(t, meta, trace(t, py, "cpu", args...))
			}
			kinds := map[string]int{}
			for _, a := range meta.Allocs {
				kinds[a.Kind]++
				if a.Phase == "forward" && a.Kind == "opttemp" {
					t.Errorf("forward allocation %+v counted as the optimizer's", a)
				}
			}
			if kinds["grad"] == 0 || kinds["fwd"] == 0 {
				t.Errorf("kinds %v: want the closure's gradients and activations", kinds)
			}
			if mode == "sgd" && kinds["optstate"] == 0 {
				t.Errorf("kinds %v: want the momentum buffers as states", kinds)
			}
		})
	}
}

// TestRelaunchedCopies: a program that starts copies of itself for the
// other GPUs (Lightning's DDP) traces as rank 0, and each copy ends as it
// imports torch, saying so; before, the copies ran untraced and for real
// (on a GPU host: on its GPUs, waiting for ranks that never come). Its
// DataLoader's spawned workers, which import it with its sys.argv too,
// run (they were taken for copies: Python 3.14's forkserver workers ended).
func TestRelaunchedCopies(t *testing.T) {
	py := torchPython(t)
	args := []string{filepath.Join("testdata", "relaunch.py"), "2"}
	agree(t, trace(t, py, "meta", args...), trace(t, py, "cpu", args...))
}

// agree: the meta and cpu traces of one script allocate storages of the
// same sizes and reach the same live-bytes and allocated peaks.
func agree(t *testing.T, meta, real *estimate.Trace) {
	t.Helper()
	samePeaks(t, meta, real)
	if sm, sr := sizes(meta), sizes(real); strings.Join(sm, " ") != strings.Join(sr, " ") {
		t.Errorf("allocation sizes differ:\nmeta %v\nreal %v", sm, sr)
	}
}

// samePeaks: two optimizer steps of a model, the same live-bytes and
// allocated peaks in both modes.
func samePeaks(t *testing.T, meta, real *estimate.Trace) {
	t.Helper()
	rm, rr := estimate.ReplayTrace(meta, estimate.TraceReplay{}), estimate.ReplayTrace(real, estimate.TraceReplay{})
	if rm.LiveBytesPeak != rr.LiveBytesPeak || rm.PeakAllocatedBytes != rr.PeakAllocatedBytes {
		t.Errorf("peaks differ: meta live %d allocated %d, real live %d allocated %d",
			rm.LiveBytesPeak, rm.PeakAllocatedBytes, rr.LiveBytesPeak, rr.PeakAllocatedBytes)
	}
	if rm.Steps != 2 || len(meta.Allocs) < 20 {
		t.Errorf("%d steps, %d allocations: want 2 steps of a model", rm.Steps, len(meta.Allocs))
	}
	t.Logf("%d allocations, live peak %d B, allocated peak %d B, both modes", len(meta.Allocs), rm.LiveBytesPeak, rm.PeakAllocatedBytes)
}

// bothModes traces script with args on meta and on real CPU tensors,
// checks samePeaks, and returns the meta trace.
func bothModes(t *testing.T, py, script string, args ...string) *estimate.Trace {
	t.Helper()
	argv := append([]string{script}, args...)
	meta := trace(t, py, "meta", argv...)
	samePeaks(t, meta, trace(t, py, "cpu", argv...))
	return meta
}

// TestDetectorIdioms: what detectors' training code does between the
// model and its loss traces as on real tensors (testdata/detector_idioms.py:
// before the fixes, meta stopped at torch.full's device-scalar fill and
// at a size read from a device tensor, torch 1.13 at torch.Tensor([...]) in
// both modes, cpu mode lost what followed x.to(y.device), and meta skipped
// the box loss on a mask's placeholder sum): the box head gets its Adam
// states, the sum is counted by the most rule, every health check passes.
func TestDetectorIdioms(t *testing.T) {
	py := torchPython(t)
	meta := bothModes(t, py, filepath.Join("testdata", "detector_idioms.py"))
	params, _ := kindBytes(meta, "param", 0)
	if states, _ := kindBytes(meta, "optstate", 0); states < 2*params {
		t.Errorf("Adam states %d B for %d B of weights: want twice (the box loss ran)", states, params)
	}
	most := false
	for _, w := range meta.Warnings {
		if w.Kind == "maskcount" && w.Op == "sum" {
			most = true
		}
		if w.Kind == "placeholder" && w.Op == "_local_scalar_dense" {
			t.Errorf("a known value read as a placeholder: %+v", w)
		}
	}
	if !most {
		t.Errorf("warnings %+v: want the mask's sum counted all true (a maskcount note)", meta.Warnings)
	}
}

// TestProbeBeforeTraining: the peak in an AutoBatch-like probe before
// the first optimizer step is the run's (the GPU's max_memory_allocated),
// and the fit says what the training steps after it need: on a GPU the
// probe does not fit but the training does, the training fits
// (testdata/probe_autobatch.py).
func TestProbeBeforeTraining(t *testing.T) {
	py := torchPython(t)
	meta := bothModes(t, py, filepath.Join("testdata", "probe_autobatch.py"))
	gpu := estimate.GPU{Name: "small", MemoryBytes: 1200 << 20, ComputeCapability: 90}
	r, f, err := estimate.FitTrace(meta, gpu, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	p := f.Probe
	if f.Fits || p == nil || !p.Fits || p.OOM || p.PeakAllocatedBytes >= r.PeakAllocatedBytes/2 {
		t.Fatalf("fits %v, probe %+v (run's peak %d): want the run not fitting, the training after the probe fitting in under half",
			f.Fits, p, r.PeakAllocatedBytes)
	}
	// on a GPU that holds all of it, the probe is still said, and fits
	big := estimate.GPU{Name: "big", MemoryBytes: 80 << 30, ComputeCapability: 90}
	if _, f, _ := estimate.FitTrace(meta, big, 0.05); !f.Fits || f.Probe == nil || !f.Probe.Fits {
		t.Errorf("80 GiB: fits %v, probe %+v", f.Fits, f.Probe)
	}
}

// sizes: each allocation's bytes, sorted (the category of a scalar the
// optimizer or GradScaler makes can differ between the modes, its size not).
func sizes(tr *estimate.Trace) []string {
	var out []string
	for _, s := range estimate.TraceCategorySizes(tr) {
		out = append(out, s[strings.LastIndexByte(s, ':')+1:])
	}
	sort.Strings(out)
	return out
}

// TestManualUpdateLoopEnds: a loop that updates its weights by hand (no
// torch.optim optimizer) ends after the steps asked for, each backward
// counted as a step, instead of running its 1000 batches (before the fix it
// ran until the program ended or the timeout). Meta and CPU agree.
func TestManualUpdateLoopEnds(t *testing.T) {
	py := torchPython(t)
	args := []string{filepath.Join("testdata", "manualsgd.py"), "8"}
	meta, real := trace(t, py, "meta", args...), trace(t, py, "cpu", args...)
	samePeaks(t, meta, real)
	if !strings.Contains(meta.End.Message, "no torch.optim optimizer") {
		t.Errorf("end %q: want it to say the steps were backward passes", meta.End.Message)
	}
	// its GRU runs as cuDNN's one kernel on a GPU: said
	rnn := 0
	for _, w := range meta.Warnings {
		if w.Kind == "cudnnrnn" && w.Op == "GRU" {
			rnn++
		}
	}
	if rnn != 1 {
		t.Errorf("%d notes of a recurrent module, want 1 (its GRU): %+v", rnn, meta.Warnings)
	}
}

// TestProbeBeforeOptimizerIsNoStep: backward passes with no update
// between them, before any optimizer is made (yolov5's AutoBatch probe),
// are not steps: the trace goes on to the training the probe sized. What
// the probe reads from memory_reserved() grows with its batch (the cache
// keeps the activations' blocks until empty_cache()), so it picks the
// batch it would on the GPU; before, the trace ended inside the probe,
// whose 64-row batch it then reported as the job.
func TestProbeBeforeOptimizerIsNoStep(t *testing.T) {
	py := torchPython(t)
	var out strings.Builder
	tr, err := Run(context.Background(), Options{Argv: []string{py, filepath.Join("testdata", "probefirst.py")}, Steps: 2, Output: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "batch 512") {
		t.Errorf("the probe did not see its memory grow:\n%s", out.String())
	}
	var probes int
	for _, l := range strings.Split(out.String(), "\n") {
		var b, reserved, allocated int64
		if n, _ := fmt.Sscanf(l, "probe %d %d %d", &b, &reserved, &allocated); n == 3 {
			probes++
			// the cache holds at least the forward's activations: the
			// first layer's output, b rows of 1024 floats
			if reserved < allocated+b*1024*4 {
				t.Errorf("probe %d: memory_reserved %d, allocated %d: the cache is not held", b, reserved, allocated)
			}
		}
	}
	if probes != 3 {
		t.Errorf("%d probes printed:\n%s", probes, out.String())
	}
	r := estimate.ReplayTrace(tr, estimate.TraceReplay{})
	if tr.End == nil || tr.End.Kind != "steps" || r.Steps != 2 {
		t.Fatalf("end %+v after %d steps: want the 2 training steps", tr.End, r.Steps)
	}
	var states int
	for _, a := range tr.Allocs {
		if a.Kind == "optstate" {
			states++
		}
	}
	if states == 0 {
		t.Errorf("no optimizer state traced: the trace ended before the training")
	}
}

// TestGANIterationEndsWithGenerator: a GAN's discriminator and generator
// steps are one iteration. --steps 2 reaches the peak a longer trace
// finds (both Adams' states alive through the second iteration's
// generator pass); counting each step() had ended the trace at the second
// iteration's discriminator step, 11 % under on a larger GAN.
func TestGANIterationEndsWithGenerator(t *testing.T) {
	py := torchPython(t)
	peak := func(steps int) int64 {
		var out strings.Builder
		tr, err := Run(context.Background(), Options{Argv: []string{py, filepath.Join("testdata", "gan.py")}, Steps: steps, Output: &out})
		if err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		r := estimate.ReplayTrace(tr, estimate.TraceReplay{})
		if r.Steps != steps {
			t.Errorf("--steps %d: %d traced", steps, r.Steps)
		}
		return r.PeakAllocatedBytes
	}
	if two, three := peak(2), peak(3); two != three {
		t.Errorf("peak allocated: --steps 2 %d, --steps 3 %d: the second iteration was not traced to its end", two, three)
	}
}

// TestLegacyCudaTypes: torch.cuda.FloatTensor as a constructor and as
// .type()'s argument, and the GPU as the default device (set by the legacy
// type or by torch.set_default_device), each makes a device tensor in
// both modes, as on a GPU; a CPU-only torch had refused them before the
// first step. The model made under the default device is the device's.
func TestLegacyCudaTypes(t *testing.T) {
	check := func(t *testing.T, py, mode string) {
		args := []string{filepath.Join("testdata", "legacy_types.py"), mode}
		meta, real := trace(t, py, "meta", args...), trace(t, py, "cpu", args...)
		samePeaks(t, meta, real)
		var params int
		for _, a := range meta.Allocs {
			if a.Kind == "param" {
				params++
			}
		}
		if params != 4 {
			t.Errorf("%s: %d parameter allocations on the device, want the model's 4", mode, params)
		}
	}
	for _, mode := range []string{"", "default-type"} {
		t.Run("torch "+mode, func(t *testing.T) { check(t, torchPython(t), mode) })
	}
	for _, mode := range []string{"", "default-type", "default-device"} {
		t.Run("torch2 "+mode, func(t *testing.T) { check(t, torch2Python(t), mode) })
	}
}

// TestFusedAdamWOnMeta: AdamW(fused=True) (nanoGPT on CUDA) traces on meta
// as on CPU tensors; torch 2.x had refused meta parameters for it. Skipped
// where AdamW has no fused option (torch 1.13: set TORCHMEM_TORCH_PYTHON
// to a torch 2.x Python to run it).
func TestFusedAdamWOnMeta(t *testing.T) {
	py := torchPython(t)
	script := filepath.Join("testdata", "fusedadamw.py")
	if !hasFusedAdamW(py) {
		t.Skip("this torch's AdamW has no fused option")
	}
	agree(t, trace(t, py, "meta", script, "8"), trace(t, py, "cpu", script, "8"))
}

// TestOptimizerBeforeCuda: an optimizer made before the model goes to the
// GPU, its weights real host tensors a loader put into _parameters
// (diffusers' DreamBooth script: AdamW made, then accelerate's prepare
// moves the UNet). cpu -> meta made new Parameters where cpu -> cuda keeps
// them, so the optimizer held host weights whose gradients never came: no
// states and no update, silently (DreamBooth's 16.9 GiB step came out as
// 9.0 GiB). Both modes now make the AdamW states at the first step and
// reach the same peaks: on torch 1.13 (the optimizer takes the moved
// weights at its step) and on torch 2 (the moved tensor swapped into the
// Parameter).
func TestOptimizerBeforeCuda(t *testing.T) {
	t.Run("torch", func(t *testing.T) { checkOptimizerBeforeCuda(t, torchPython(t)) })
	t.Run("torch2", func(t *testing.T) { checkOptimizerBeforeCuda(t, torch2Python(t)) })
}

func checkOptimizerBeforeCuda(t *testing.T, py string) {
	args := []string{filepath.Join("testdata", "optfirst.py"), "8"}
	meta, real := trace(t, py, "meta", args...), trace(t, py, "cpu", args...)
	samePeaks(t, meta, real)
	var states int64
	for _, s := range estimate.TraceCategorySizes(meta) {
		if strings.HasPrefix(s, "optimizer_states:") {
			n, _ := strconv.ParseInt(s[len("optimizer_states:"):], 10, 64)
			states += n
		}
	}
	// AdamW: two float32 states per weight of the 0.27M-parameter model
	if want := int64(2 * 4 * (256*512 + 512 + 512*256 + 256 + 2*256 + 256*10 + 10)); states != want {
		t.Errorf("meta: %d B of optimizer states, want %d (AdamW's two per weight)", states, want)
	}
}

// hasFusedAdamW: whether py's torch.optim.AdamW takes fused= (torch 2.x).
func hasFusedAdamW(py string) bool {
	return exec.Command(py, "-c", "import inspect, torch, sys; sys.exit('fused' not in inspect.signature(torch.optim.AdamW).parameters)").Run() == nil
}

// TestDistributedSaidPlainly: on a torch without a fake process group
// (before 2.1: Debian 12's 1.13), a DDP script run as one process stops at
// init_process_group saying why, what ran (the model on the GPU)
// reported; under torchrun (its script and `python -m
// torch.distributed.run`) the launcher, which imports torch first, is an
// error naming it and what to do instead of a trace of the launcher while
// its workers run untraced and wait on each other. torch >= 2.1 traces
// them (TestDistributedDDP).
func TestDistributedSaidPlainly(t *testing.T) {
	py := torchPython(t)
	if torchAtLeast(py, 2, 1) {
		t.Skip("this torch traces a process group (TestDistributedDDP)")
	}
	script := filepath.Join("testdata", "ddp.py")
	var out strings.Builder
	tr, err := Run(context.Background(), Options{Argv: []string{py, script}, Output: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if tr.End == nil || tr.End.Kind != "error" || tr.End.Op != "init_process_group" ||
		!strings.Contains(tr.End.Message, "torch 2.1 or later") || len(tr.End.Where) == 0 || !strings.Contains(tr.End.Where[0], "ddp.py:11") {
		t.Errorf("end %+v, want init_process_group at ddp.py:11 saying torch 2.1 or later traces it", tr.End)
	}
	if r := estimate.ReplayTrace(tr, estimate.TraceReplay{}); r.PeakAllocatedBytes < 512*512*4 {
		t.Errorf("what ran (the model on the GPU) is not reported: peak %d", r.PeakAllocatedBytes)
	}
	launchers := [][]string{{py, "-m", "torch.distributed.run", "--nproc_per_node", "2", script}}
	if p, err := exec.LookPath("torchrun"); err == nil {
		launchers = append(launchers, []string{p, "--nproc_per_node", "2", script})
	}
	for _, argv := range launchers {
		_, err := Run(context.Background(), Options{Argv: argv, Output: &out, Timeout: 2 * time.Minute})
		if err == nil || !strings.Contains(err.Error(), "no fake process group") {
			t.Errorf("%v: err %v, want the launcher named and why it is not traced", argv, err)
		}
	}
}

// TestProgramCapsItsAllocator: torch.cuda.set_per_process_memory_fraction
// in the program caps the replay's allocator at that share of --gpu: on
// 2 GiB, a quarter (512 MiB) does not hold the job's peak, which the GPU
// itself would; half of it does.
func TestProgramCapsItsAllocator(t *testing.T) {
	py := torchPython(t)
	gpu := estimate.GPU{Name: "test", MemoryBytes: 2 << 30}
	for _, c := range []struct {
		fraction string
		fits     bool
	}{{"0.25", false}, {"0.5", true}} {
		var out strings.Builder
		tr, err := Run(context.Background(), Options{Argv: []string{py, filepath.Join("testdata", "fraction.py"), c.fraction},
			Steps: 2, GPUBytes: gpu.MemoryBytes, Output: &out})
		if err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		if !strings.Contains(out.String(), "refused: TypeError") {
			t.Errorf("fraction 2 (an int) was not refused as PyTorch refuses it:\n%s", out.String())
		}
		if f, byProgram := tr.MemoryFraction(); strconv.FormatFloat(f, 'f', -1, 64) != c.fraction || !byProgram {
			t.Fatalf("fraction %v (by the program: %v), want %s", f, byProgram, c.fraction)
		}
		r, fit, err := estimate.FitTrace(tr, gpu, 0.05)
		if err != nil {
			t.Fatal(err)
		}
		if fit.Cap == nil || fit.Cap.Source != estimate.CapByProgram || fit.Fits != c.fits || r.OOM == c.fits {
			t.Errorf("fraction %s: cap %+v, fits %v, oom %v (peak reserved %d MiB): want fits %v",
				c.fraction, fit.Cap, fit.Fits, r.OOM, r.PeakReservedBytes>>20, c.fits)
		}
		if !strings.Contains(r.AllocConf, "per_process_memory_fraction:"+c.fraction) {
			t.Errorf("alloc conf %q", r.AllocConf)
		}
		if !c.fits {
			continue
		}
		// garbage_collection_threshold acts under the program's fraction:
		// the cached segments go back before new ones are made.
		tr.Alloc.GCThreshold = 0.3
		gc, _, err := estimate.FitTrace(tr, gpu, 0.05)
		if err != nil {
			t.Fatal(err)
		}
		if gc.Collections == 0 || gc.GCIdle != "" || gc.PeakReservedBytes >= r.PeakReservedBytes ||
			gc.PeakAllocatedBytes != r.PeakAllocatedBytes {
			t.Errorf("threshold 0.3: %d collections (idle %q), reserved %d MiB against %d, allocated %d against %d",
				gc.Collections, gc.GCIdle, gc.PeakReservedBytes>>20, r.PeakReservedBytes>>20, gc.PeakAllocatedBytes, r.PeakAllocatedBytes)
		}
	}
}
