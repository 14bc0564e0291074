package tracerun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/torchmem/torchmem/internal/estimate"
	"github.com/torchmem/torchmem/internal/gpu"
	"github.com/torchmem/torchmem/internal/hook"
	"github.com/torchmem/torchmem/internal/snapshot"
)

// NVMLEvery is how often --real asks NVML what the job's processes hold:
// one query is ~22 µs (fixtures README), so 50 per second cost nothing
// and catch a peak that lasts a fraction of a step.
const NVMLEvery = 20 * time.Millisecond

// RealOptions add what only a run on the GPU needs.
type RealOptions struct {
	// GPU is the backend sampled for nvidia-smi's figure; nil opens the
	// host's (NVML, else nvidia-smi, else none, with a notice).
	GPU gpu.Backend
	// SysRoot, ProcRoot: where gpu.Open looks ("" is the host's).
	SysRoot, ProcRoot string
	// Snapshot, when set, is where the run's snapshot pickle is copied.
	Snapshot string
	// Every is the NVML sampling period (NVMLEvery if 0).
	Every time.Duration
}

// RunReal runs the program on its real GPU with the allocator's history
// recorded (torchmem_hook/_trace_real.py) for o.Steps optimizer steps and
// reports what it measured. A host without CUDA, or a torch older than
// 2.0, is an error that says so.
func RunReal(ctx context.Context, o Options, ro RealOptions) (*Real, error) {
	o.Device = "real"
	o = o.withDefaults()
	if len(o.Argv) == 0 {
		return nil, errors.New("--trace: give the program after --, e.g. -- python train.py")
	}
	b, notice := ro.GPU, ""
	if b == nil {
		b, notice = gpu.Open(gpu.Options{SysRoot: ro.SysRoot, ProcRoot: ro.ProcRoot})
		defer b.Close()
	}
	if ro.Every <= 0 {
		ro.Every = NVMLEvery
	}
	dir, err := os.MkdirTemp("", "torchmem-trace-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var peak ProcessPeak
	var wg sync.WaitGroup
	sctx, stop := context.WithCancel(ctx)
	runErr, err := execTraced(ctx, o, dir, func(pid int) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			peak = sampleJob(sctx, b, pid, ro.Every)
		}()
	})
	stop()
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if b.Info().Backend == "none" {
		peak = ProcessPeak{Notice: notice}
	}
	return readReal(dir, o, ro, runErr, peak)
}

// readReal reads what the run left in dir.
func readReal(dir string, o Options, ro RealOptions, runErr error, peak ProcessPeak) (*Real, error) {
	t, err := readTrace(dir, o, runErr)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(dir, hook.TraceRealStats))
	if err != nil {
		if t.End != nil {
			return nil, fmt.Errorf("--real: %s left no measurements: %s", o.Argv[0], t.End.Message)
		}
		return nil, fmt.Errorf("--real: %s left no measurements: %w", o.Argv[0], err)
	}
	st, err := ParseRealStats(io.LimitReader(f, maxStatsBytes))
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("--real: %s: %w", hook.TraceRealStats, err)
	}
	var snap *snapshot.Snapshot
	copied := ""
	if st.Snapshot != "" {
		path := filepath.Join(dir, hook.TraceRealSnapshot)
		if snap, err = snapshot.ReadFile(path, nil); err != nil {
			return nil, fmt.Errorf("--real: %w", err)
		}
		if ro.Snapshot != "" {
			if err := copyFile(path, ro.Snapshot); err != nil {
				return nil, fmt.Errorf("--snapshot: %w", err)
			}
			copied = ro.Snapshot
		}
	}
	end := t.End
	if end == nil {
		end = &estimate.TraceNote{Kind: "killed", Message: "the program ended without a word from the tracer"}
	}
	r := Measure(st, snap, peak, end)
	r.SnapshotFile = copied
	return r, nil
}

// maxStatsBytes bounds real.json: memory_stats has ~100 keys, the phase
// marks at most _trace_real.MAX_MARKS entries.
const maxStatsBytes = 16 << 20

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("write %s: %w", to, err)
	}
	return out.Close()
}

// sampleJob asks b every period what the job's processes (the program's
// process group: it runs with Setpgid) hold on the GPUs, until ctx ends,
// and returns the highest sum seen.
func sampleJob(ctx context.Context, b gpu.Backend, pgid int, every time.Duration) ProcessPeak {
	p := ProcessPeak{Every: every.String()}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		procs, err := b.Processes()
		if err != nil && p.Notice == "" {
			p.Notice = "NVML: " + err.Error()
		}
		if n, ok := jobBytes(procs, pgid, syscall.Getpgid); ok {
			p.Samples++
			p.Bytes = max(p.Bytes, n)
		}
		select {
		case <-ctx.Done():
			return p
		case <-tick.C:
		}
	}
}

// jobBytes sums the GPU memory of the processes in process group pgid
// (the leader or a child the job started); ok is false when none is on
// the GPU with a figure.
func jobBytes(procs []gpu.Process, pgid int, getpgid func(int) (int, error)) (int64, bool) {
	var n int64
	ok := false
	for _, p := range procs {
		if p.PID <= 0 || p.UsedBytes == nil {
			continue
		}
		if p.PID != pgid {
			if g, err := getpgid(p.PID); err != nil || g != pgid {
				continue
			}
		}
		n += *p.UsedBytes
		ok = true
	}
	return n, ok
}
