// Package supervisor runs one job under torchmem: it starts the command in
// its own process group and memory cgroup (through a re-exec of torchmem
// as a trampoline, so NUMA binding and rlimits apply before the job's first
// instruction), forwards signals, samples memory on a tick and on cgroup
// events, applies policy actions through the in-process hook, records
// everything, and at the end kills what is left of the job, explains how it
// ended and returns its exit status the way a shell would.
//
// Stopping torchmem stops the job: SIGTERM is forwarded and the cgroup
// SIGKILLed after the grace period (at once on a second SIGTERM); if
// torchmem dies uncleanly the job's main process gets a parent-death
// SIGKILL and the next run removes what is left (SweepStale), unless
// KeepJobOnExit. The store then marks the run "supervisor lost".
package supervisor

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/torchmem/torchmem/internal/gpu"
	"github.com/torchmem/torchmem/internal/jobcgroup"
	"github.com/torchmem/torchmem/internal/policy"
	"github.com/torchmem/torchmem/internal/store"
	"golang.org/x/text/language"
)

// Recorder is where the run's history goes (the store; a no-op when
// history is off). Appends are buffered by the implementation.
type Recorder interface {
	AppendSample(s store.Sample)
	AppendEvent(e store.Event)
	AppendStep(s store.Step)
	UpdatePeaks(peaks map[string]int64)
}

// KernelLog returns kernel log lines since a time (for the post-mortem:
// OOM-killer reports about the job's PIDs). Nil skips that source.
type KernelLog func(ctx context.Context, since time.Time) ([]string, error)

// Config is one supervised run.
type Config struct {
	Argv []string
	// Env is the job's environment before the hook's variables are added.
	Env []string
	// Stdin, Stdout, Stderr are handed to the job as they are (nil: ours),
	// so it writes to the same terminal, pipe or file it would without us.
	Stdin, Stdout, Stderr *os.File
	// Notices is where torchmem's own lines go (notices, live status,
	// summary): torchmem's stderr.
	Notices io.Writer
	// StatusLine redraws a one-line live status on Notices (a terminal).
	StatusLine bool
	// OnLive, when set, gets the live state after every sample (--tui),
	// called on the supervisor's loop: it must not block.
	OnLive func(Live)
	// Interactive: Stdin is the terminal and torchmem is its foreground
	// process group. The job then stays in torchmem's process group, as
	// the commands of a shell script do, so it can read the terminal (pdb,
	// input()) and gets Ctrl-C straight from it, while torchmem sees each
	// Ctrl-C too (not forwarded again; the second escalates).
	Interactive bool
	// Self is the torchmem binary to re-exec as the trampoline.
	Self string
	// SelfArgs are put before TrampolineArg (tests run a test binary).
	SelfArgs []string

	ProcRoot, SysRoot string

	// Cgroup: make a job cgroup (false: monitor-only by request).
	Cgroup      bool
	CgroupName  string
	Limits      jobcgroup.Limits
	OOMScoreAdj *int
	NProc       *uint64
	NoFile      *uint64
	// NUMA is "auto", "off" or a node number; Numactl is the numactl
	// binary ("" to bind without it).
	NUMA    string
	Numactl string

	// Interval is the fast sampling tick (default 1 s).
	Interval time.Duration
	Rules    []policy.Rule
	// Hook turns on the in-process PyTorch hook; HookDir is its private
	// run directory (made 0700).
	Hook    bool
	HookDir string
	// KeepHookDir leaves the hook dir (and its snapshots) in place at the end.
	KeepHookDir bool
	// SnapshotDir is where memory snapshots go (dumped at a CUDA OOM with
	// RecordHistory, or by the snapshot action) so they outlive the run;
	// removed at the end only when empty. "" = HookDir/snapshots, which
	// goes with the hook dir.
	SnapshotDir   string
	HookInterval  time.Duration
	RecordHistory int
	// DetectCycles > 0 has the hook report reference cycles holding
	// tensors, at most this many per process (hook.InstallOptions).
	DetectCycles int
	// NoStepPeaks: no per-step peak reset in the hook (hook.InstallOptions).
	NoStepPeaks bool
	// Grace is how long a stop, a second Ctrl-C or a SIGTERM to torchmem
	// waits after SIGTERM before SIGKILLing the cgroup (default 10 s).
	Grace time.Duration
	// KeepJobOnExit lets the job outlive torchmem: no parent-death signal,
	// a SIGTERM to torchmem is only forwarded, and no later run cleans up
	// its cgroup. By default stopping torchmem stops the job (as systemd's
	// KillMode=control-group).
	KeepJobOnExit bool
	// ReaperArgv runs the reaper (reaper.go) with the owner record's path
	// appended, e.g. {"/usr/bin/torchmem", "__reap"}; nil: none, and a
	// supervisor that dies leaves its cgroup and run directory to the
	// next run's sweep.
	ReaperArgv []string

	// RunID is the run's id, given to exec and notify actions ("": the
	// CgroupName after its "run-").
	RunID string

	GPU       gpu.Backend // nil: no GPU
	Rec       Recorder    // nil: no history
	KernelLog KernelLog
	// Lang is the language of the post-mortem as Summary.Print shows it
	// (English when unset); the summary kept with the run, and so every
	// JSON output, stays English.
	Lang language.Tag
	// Now is the clock (time.Now unless set) of the run's decisions: the
	// policy's durations and rate limits, the grace period's deadline, event
	// and sample times, the status line's elapsed time and redraw rate, the
	// run's duration. The sampling tick and the waits for the job's last
	// messages stay on the real clock.
	Now func() time.Time
}

func (c *Config) defaults() {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Interval <= 0 {
		c.Interval = time.Second
	}
	if c.Grace <= 0 {
		c.Grace = 10 * time.Second
	}
	if c.Stdin == nil {
		c.Stdin = os.Stdin
	}
	if c.Stdout == nil {
		c.Stdout = os.Stdout
	}
	if c.Stderr == nil {
		c.Stderr = os.Stderr
	}
	if c.Notices == nil {
		c.Notices = io.Discard
	}
	if c.ProcRoot == "" {
		c.ProcRoot = "/proc"
	}
	if c.SysRoot == "" {
		c.SysRoot = "/sys"
	}
	if c.Rec == nil {
		c.Rec = nopRecorder{}
	}
}

// now is the run's clock, Config.Now (time.Now for a sup made without
// defaults, as unit tests do).
func (s *sup) now() time.Time {
	if s.cfg.Now == nil {
		return time.Now()
	}
	return s.cfg.Now()
}

type nopRecorder struct{}

func (nopRecorder) AppendSample(store.Sample)    {}
func (nopRecorder) AppendEvent(store.Event)      {}
func (nopRecorder) AppendStep(store.Step)        {}
func (nopRecorder) UpdatePeaks(map[string]int64) {}
