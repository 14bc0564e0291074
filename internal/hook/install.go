package hook

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/torchmem/torchmem/internal/hook/python"
)

// Environment variables the hook reads (set by Install).
const (
	EnvSocket        = "TORCHMEM_HOOK_SOCKET"    // Unix socket path; the hook stays off without it
	EnvDir           = "TORCHMEM_HOOK_DIR"       // the run directory (snapshots default there)
	EnvInterval      = "TORCHMEM_HOOK_INTERVAL"  // seconds between allocator stats (float)
	EnvStepMaxHz     = "TORCHMEM_HOOK_STEP_HZ"   // most step messages per second
	EnvRecordHistory = "TORCHMEM_RECORD_HISTORY" // max_entries for _record_memory_history; unset or 0: off
	EnvSnapshotDir   = "TORCHMEM_SNAPSHOT_DIR"   // where OOM snapshots go
	EnvDetectCycles  = "TORCHMEM_DETECT_CYCLES"  // most cycle reports per process; unset or 0: off
	EnvStepPeaks     = "TORCHMEM_STEP_PEAKS"     // "0": no per-step peak reset
)

// InstallOptions tune the hook inside the job.
type InstallOptions struct {
	// Interval between allocator stats messages (default 1 s).
	Interval time.Duration
	// StepMaxHz caps step messages per second per process (default 20);
	// steps are still counted, a message covers several.
	StepMaxHz int
	// RecordHistory > 0 turns on torch.cuda.memory._record_memory_history
	// (stacks="python") with this many max_entries, so an OOM dumps a
	// snapshot. It costs ~20% step time on an H200: opt-in.
	RecordHistory int
	// SnapshotDir is where OOM snapshots are dumped (default dir/snapshots).
	SnapshotDir string
	// DetectCycles > 0 reports reference cycles holding tensors when the
	// garbage collector frees them, at most this many per process; it
	// turns on tracemalloc (4 frames) for the creating lines.
	DetectCycles int
	// NoStepPeaks stops the hook resetting the allocator's peaks at each
	// optimizer step (then the program's own max_memory_allocated() is
	// the peak since start again, and steps carry no measured peaks).
	NoStepPeaks bool
}

// PythonDir is where Install puts the package, relative to dir; it is the
// directory prepended to PYTHONPATH.
const PythonDir = "python"

// Install writes the embedded Python hook into dir/python (dir is made 0700
// if missing) and returns the variables to add to the job's environment as
// KEY=VALUE strings. PYTHONPATH is returned as the hook directory alone;
// MergeEnv prepends it to an existing PYTHONPATH.
func Install(dir string, o InstallOptions) ([]string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create hook dir %s: %w", dir, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("chmod hook dir %s: %w", dir, err)
	}
	pyDir := filepath.Join(dir, PythonDir)
	if err := python.WriteTree(pyDir); err != nil {
		return nil, err
	}
	// A snapshot directory of the caller's (next to the history store, or
	// ./torchmem-RUN-snapshots) is made by the hook when it writes the
	// first snapshot: made here, every run without one left an empty
	// directory in the working directory when torchmem did not get to
	// remove it (killed, or a crash of the job's host).
	snapDir := o.SnapshotDir
	if snapDir == "" {
		snapDir = filepath.Join(dir, "snapshots")
		if err := os.MkdirAll(snapDir, 0o700); err != nil {
			return nil, fmt.Errorf("create snapshot dir %s: %w", snapDir, err)
		}
	}
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.StepMaxHz <= 0 {
		o.StepMaxHz = 20
	}
	env := []string{
		"PYTHONPATH=" + pyDir,
		EnvSocket + "=" + filepath.Join(dir, SocketName),
		EnvDir + "=" + dir,
		EnvInterval + "=" + strconv.FormatFloat(o.Interval.Seconds(), 'f', -1, 64),
		EnvStepMaxHz + "=" + strconv.Itoa(o.StepMaxHz),
		EnvSnapshotDir + "=" + snapDir,
	}
	if o.RecordHistory > 0 {
		env = append(env, EnvRecordHistory+"="+strconv.Itoa(o.RecordHistory))
	}
	if o.DetectCycles > 0 {
		env = append(env, EnvDetectCycles+"="+strconv.Itoa(o.DetectCycles))
	}
	if o.NoStepPeaks {
		env = append(env, EnvStepPeaks+"=0")
	}
	return env, nil
}

// MergeEnv returns base with add applied: a PYTHONPATH in add is prepended
// to base's (so the hook's sitecustomize is found first), other keys
// replace base's.
func MergeEnv(base, add []string) []string {
	out := make([]string, 0, len(base)+len(add))
	idx := map[string]int{}
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := idx[k]; ok {
			out[i] = kv
			continue
		}
		idx[k] = len(out)
		out = append(out, kv)
	}
	for _, kv := range add {
		k, v, _ := strings.Cut(kv, "=")
		i, ok := idx[k]
		if !ok {
			idx[k] = len(out)
			out = append(out, kv)
			continue
		}
		if k == "PYTHONPATH" {
			if _, old, _ := strings.Cut(out[i], "="); old != "" {
				v = v + string(os.PathListSeparator) + old
			}
			kv = k + "=" + v
		}
		out[i] = kv
	}
	return out
}
