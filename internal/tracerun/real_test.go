package tracerun

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/estimate"
	"github.com/torchmem/torchmem/internal/gpu"
	"github.com/torchmem/torchmem/internal/snapshot"
)

// The real inputs of --real's report (testdata/real, copied from the
// project's fixtures, all from one H200 host, torch 2.11, 2026-11-29):
//   - train_gpt2_bf16.pickle.gz: torch.cuda.memory._dump_snapshot() after 4
//     steps of GPT-2 (124M) bf16 training, 17,575 trace entries;
//   - memory_stats_train.json: torch.cuda.memory_stats() of that run;
//   - nvml-during-train.json: NVML (nvidia-ml-py) while it ran, pid 517;
//   - grad_accum_4.pickle: 3 AdamW steps of 4 micro-batches (no stats).

func loadStats(t *testing.T) *RealStats {
	t.Helper()
	b, err := os.ReadFile("testdata/real/memory_stats_train.json")
	if err != nil {
		t.Fatal(err)
	}
	st := &RealStats{Torch: "2.11.0+cu130", Steps: 4, End: "steps", Snapshot: "real.pickle"}
	if err := json.Unmarshal(b, &st.MemoryStats); err != nil {
		t.Fatal(err)
	}
	return st
}

func loadSnap(t *testing.T, name string) *snapshot.Snapshot {
	t.Helper()
	s, err := snapshot.ReadFile("testdata/real/"+name, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// nvmlPeak reads the NVML capture as the sampler would for the job led by
// pid 517.
func nvmlPeak(t *testing.T) ProcessPeak {
	t.Helper()
	b, err := gpu.NewFakeFromNVMLJSON("testdata/real/nvml-during-train.json")
	if err != nil {
		t.Fatal(err)
	}
	procs, _ := b.Processes()
	n, ok := jobBytes(procs, 517, func(int) (int, error) { return 0, errors.New("not ours") })
	if !ok {
		t.Fatalf("pid 517 not found in %+v", procs)
	}
	return ProcessPeak{Bytes: n, Samples: 1, Every: "20ms"}
}

// TestMeasureGPT2: the report of a real GPT-2 run. The peaks are
// memory_stats' (max_memory_allocated/reserved); the trace's own replay
// agrees with memory_stats where they count the same thing: its requested
// peak is requested_bytes.all.peak, its reserved peak reserved_bytes.all.peak.
func TestMeasureGPT2(t *testing.T) {
	st := loadStats(t)
	r := Measure(st, loadSnap(t, "train_gpt2_bf16.pickle.gz"), nvmlPeak(t), &estimate.TraceNote{Kind: "steps"})
	if r.PeakAllocatedBytes != 3331836416 || r.PeakReservedBytes != 3512729600 {
		t.Errorf("peaks %d / %d, want memory_stats' 3331836416 / 3512729600", r.PeakAllocatedBytes, r.PeakReservedBytes)
	}
	if want := int64(st.MemoryStats["requested_bytes.all.peak"]); r.LiveBytesPeak != want {
		t.Errorf("trace's requested peak %d, memory_stats says %d", r.LiveBytesPeak, want)
	}
	if r.TracePeakReserved != r.PeakReservedBytes {
		t.Errorf("trace's reserved peak %d, memory_stats says %d", r.TracePeakReserved, r.PeakReservedBytes)
	}
	if !r.ProcessMeasured || r.ProcessBytes != 4307550208 || !strings.HasPrefix(r.ProcessSource, "NVML") {
		t.Errorf("process %d measured=%v (%s)", r.ProcessBytes, r.ProcessMeasured, r.ProcessSource)
	}
	if r.CUDAContextBytes != 4307550208-3512729600 || r.LibraryBytes != 0 {
		t.Errorf("measured context %d, libraries %d", r.CUDAContextBytes, r.LibraryBytes)
	}
	if r.TraceEntries != 17575 || r.Events != 17575 || r.OOM {
		t.Errorf("entries %d events %d oom %v", r.TraceEntries, r.Events, r.OOM)
	}
	// Without marks from the hook, the snapshot's phase rule names the
	// phase (the fixture was recorded without torchmem).
	if r.PeakPhase != "backward" && r.PeakPhase != "forward" {
		t.Errorf("peak phase %q: the peak of training is in the forward or backward", r.PeakPhase)
	}
	if len(r.Sites) == 0 || r.Sites[0].Where != "capture_torch.py:75:train_with_history" {
		t.Fatalf("sites %+v", r.Sites)
	}
	var sites int64
	for _, s := range r.Sites {
		sites += s.Bytes
	}
	if sites > r.LiveBytesPeak {
		t.Errorf("sites hold %d bytes, more than the peak %d", sites, r.LiveBytesPeak)
	}
	// The breakdown adds up layer by layer to what nvidia-smi showed.
	var sum int64
	byName := map[string]int64{}
	for _, it := range r.Breakdown {
		sum += it.Bytes
		byName[it.Name] = it.Bytes
	}
	if sum != r.ProcessBytes {
		t.Errorf("breakdown sums to %d, process %d: %+v", sum, r.ProcessBytes, r.Breakdown)
	}
	if byName["weights"] != 497759232 || byName["optimizer_states"] != 2*497759232 {
		t.Errorf("weights %d, optimizer states %d: want GPT-2's 497759232 and twice that (AdamW)", byName["weights"], byName["optimizer_states"])
	}
	if byName["allocator_rounding"] != 3331836416-3281713864 {
		t.Errorf("rounding %d", byName["allocator_rounding"])
	}
}

// TestMeasurePhaseFromMarks: the hook's phase marks name the phase and
// step of the trace's peak by time.
func TestMeasurePhaseFromMarks(t *testing.T) {
	s := loadSnap(t, "train_gpt2_bf16.pickle.gz")
	at := s.Peak(0).TimeUS
	st := loadStats(t)
	st.Phases = []PhaseMark{{"setup", 1, at - 3_000_000}, {"forward", 1, at - 2_000_000}, {"optimizer", 1, at - 1_000_000},
		{"after_step", 2, at - 900_000}, {"forward", 2, at - 500_000}, {"backward", 2, at - 10}, {"after_backward", 2, at + 1}}
	r := Measure(st, s, ProcessPeak{}, &estimate.TraceNote{Kind: "steps"})
	if r.PeakPhase != "backward, step 2" {
		t.Errorf("peak phase %q", r.PeakPhase)
	}
}

// TestMeasureWithoutNVMLOrStats: no NVML, no memory_stats: the peaks are
// the trace's, nvidia-smi's figure is modelled, and both are said.
func TestMeasureWithoutNVMLOrStats(t *testing.T) {
	s := loadSnap(t, "grad_accum_4.pickle")
	r := Measure(&RealStats{Torch: "2.11.0", Steps: 3}, s, ProcessPeak{Notice: "no NVIDIA GPU: test"}, nil)
	if r.ProcessMeasured || r.ProcessBytes != r.PeakReservedBytes+estimate.CUDAContextBytes+estimate.LibraryBytes {
		t.Errorf("process %d measured=%v", r.ProcessBytes, r.ProcessMeasured)
	}
	if r.PeakAllocatedBytes != r.LiveBytesPeak || r.PeakAllocatedBytes < 400_000_000 || r.PeakAllocatedBytes > 600_000_000 {
		t.Errorf("peak allocated %d (the fixture's README: 490 MB)", r.PeakAllocatedBytes)
	}
	joined := strings.Join(r.Notices, "\n")
	if !strings.Contains(joined, "no NVIDIA GPU: test") || !strings.Contains(joined, "memory_stats() was not recorded") {
		t.Errorf("notices %q", joined)
	}
	if !strings.Contains(r.PeakAllocatedSource, "trace replayed") {
		t.Errorf("source %q", r.PeakAllocatedSource)
	}
}

func TestJobBytes(t *testing.T) {
	u := func(n int64) *int64 { return &n }
	procs := []gpu.Process{{PID: 10, UsedBytes: u(100)}, {PID: 11, UsedBytes: u(50)}, {PID: 12, UsedBytes: u(7)},
		{PID: 13}, {PID: 0, UsedBytes: u(1000)}}
	groups := map[int]int{11: 10, 12: 99, 13: 10}
	getpgid := func(pid int) (int, error) {
		if g, ok := groups[pid]; ok {
			return g, nil
		}
		return 0, errors.New("gone")
	}
	if n, ok := jobBytes(procs, 10, getpgid); !ok || n != 150 {
		t.Errorf("job 10: %d %v, want the leader and its child: 150", n, ok)
	}
	if _, ok := jobBytes(procs, 42, getpgid); ok {
		t.Error("job 42 is not on the GPU")
	}
}

// TestSampleJobKeepsThePeak: the sampler keeps the highest sample of the
// job's processes until it is stopped.
func TestSampleJobKeepsThePeak(t *testing.T) {
	pid := os.Getpid()
	pg, _ := syscall.Getpgid(pid)
	n := int64(1 << 30)
	b := gpu.NewFake(gpu.Info{Backend: "fake"}, nil, []gpu.Process{{PID: pid, UsedBytes: &n}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	p := sampleJob(ctx, b, pg, time.Millisecond)
	if p.Samples == 0 || p.Bytes != n {
		t.Errorf("%+v", p)
	}
}

// TestRunRealEndToEnd: --real from Python to Go on testdata/fakecuda, a
// stand-in for torch 2.x's allocator surface (this host has no GPU): the
// hook records the history, counts the steps, writes the snapshot and the
// stats, and the report has the fake allocator's peaks, the phase of the
// peak from the hook's marks and the program's line that allocated most.
func TestRunRealEndToEnd(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	const MiB = 1 << 20
	snap := filepath.Join(t.TempDir(), "real.pickle")
	var out strings.Builder
	r, err := RunReal(context.Background(), Options{Argv: []string{py, "testdata/fakereal.py"}, Output: &out},
		RealOptions{GPU: gpu.NewNoop(), Snapshot: snap})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if r.End == nil || r.End.Kind != "steps" || r.Steps != 2 || strings.Contains(out.String(), "step 3") {
		t.Fatalf("end %+v after %d steps\n%s", r.End, r.Steps, out.String())
	}
	if r.PeakAllocatedBytes != 9*MiB || r.LiveBytesPeak != 9*MiB || r.PeakReservedBytes != 12*MiB || r.TracePeakReserved != 12*MiB {
		t.Errorf("peaks %d %d %d %d", r.PeakAllocatedBytes, r.LiveBytesPeak, r.PeakReservedBytes, r.TracePeakReserved)
	}
	if r.PeakPhase != "backward, step 2" || r.GPUName != "Fake GPU" || r.Torch != "2.11.0+fake" {
		t.Errorf("phase %q, gpu %q, torch %q", r.PeakPhase, r.GPUName, r.Torch)
	}
	if len(r.Sites) == 0 || !strings.HasPrefix(r.Sites[0].Where, "fakereal.py:") || !strings.HasSuffix(r.Sites[0].Where, ":forward") ||
		r.Sites[0].Bytes != 4*MiB {
		t.Errorf("sites %+v", r.Sites)
	}
	if r.ProcessMeasured || r.SnapshotFile != snap {
		t.Errorf("process measured %v, snapshot %q", r.ProcessMeasured, r.SnapshotFile)
	}
	s, err := snapshot.ReadFile(snap, nil)
	if err != nil || s.Peak(0).Allocated != 9*MiB {
		t.Fatalf("--snapshot: %v", err)
	}
	// The history as armed at CUDA's initialisation: Python stacks, the
	// ring sized from the 1 GiB cap (1 KiB an entry, at most 1M entries).
	if h := s.AllocatorSettings; h["stacks"] != "python" || h["enabled"] != "all" || h["max_entries"] != int64(1000000) {
		t.Errorf("history armed with %v", h)
	}
}

// TestRunRealProgramFails: a program that fails on the GPU is still
// reported up to the failure, with its line.
func TestRunRealProgramFails(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	var out strings.Builder
	r, err := RunReal(context.Background(), Options{Argv: []string{py, "testdata/fakereal.py", "fail"}, Output: &out},
		RealOptions{GPU: gpu.NewNoop()})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	e := r.End
	if e == nil || e.Kind != "error" || !strings.Contains(e.Message, "the program failed in step 2") ||
		len(e.Where) == 0 || !strings.Contains(e.Where[0], "fakereal.py:") {
		t.Fatalf("end %+v\n%s", e, out.String())
	}
	if r.Steps != 1 || r.PeakAllocatedBytes != 7*(1<<20) || r.PeakPhase != "backward, step 1" {
		t.Errorf("steps %d, peak %d, phase %q", r.Steps, r.PeakAllocatedBytes, r.PeakPhase)
	}
	if !strings.Contains(out.String(), "RuntimeError") {
		t.Errorf("the program's traceback should reach its output: %s", out.String())
	}
}

// FuzzParseRealStats: real.json is written by the program's process; a
// damaged one is an error or a report, never a panic.
func FuzzParseRealStats(f *testing.F) {
	f.Add(`{"torch": "2.11.0", "steps": 2, "phases": [{"phase": "forward", "step": 1, "time_us": 5}],
		"memory_stats": {"allocated_bytes.all.peak": 1024, "reserved_bytes.all.peak": 2097152}}`)
	f.Add(`{"memory_stats": {"num_ooms": 1e308}, "device": null}`)
	f.Fuzz(func(t *testing.T, in string) {
		st, err := ParseRealStats(strings.NewReader(in))
		if err != nil {
			return
		}
		r := Measure(st, nil, ProcessPeak{}, nil)
		if r.ProcessMeasured || r.Result == nil {
			t.Errorf("%+v", r)
		}
	})
}
