// Package runner is the life of one `torchmem run`, whoever starts it: it
// turns the run's settings as given into the supervisor's configuration,
// re-runs torchmem in a delegated systemd user scope when it has no
// writable memory cgroup, creates the run's record in the history store,
// chooses the snapshot and hook directories, shows the --tui view, runs
// the supervisor and finishes the record with the status of how the job
// ended. Callers print the Result; the runner's own notices (history off,
// limits that will not act as hoped) go to Config.Notices as they happen.
//
// Exported API:
//
//	Run(ctx, Config) (*Result, error)      // one run, start to finish
//	FinishOf(*supervisor.Result) store.Finish // the store's record of how a run ended
package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/torchmem/torchmem/internal/supervisor"
	"github.com/torchmem/torchmem/internal/tui"
	"golang.org/x/text/language"
)

// Config is one run as asked for. The settings are named after torchmem
// run's flags, and errors about them name the flag, because that is where
// people give them.
type Config struct {
	// Argv is the job's command.
	Argv []string
	// Env is the job's environment (nil: torchmem's own).
	Env []string
	// Notices is where torchmem's own lines go: notices, the status line,
	// the --tui view (torchmem's stderr).
	Notices io.Writer
	// Terminal: Notices is a terminal, where a status line or the --tui
	// view can be drawn.
	Terminal bool
	// ProcRoot and SysRoot are the roots of /proc and /sys.
	ProcRoot, SysRoot string
	// ScopeArgs are torchmem's own arguments, to run itself again with them
	// inside a delegated systemd user scope when it is not root and has no
	// writable memory cgroup (maybeScope). Nil never re-runs: only the
	// torchmem run command may replace its process.
	ScopeArgs []string

	// ReaperArgv runs the process that cleans up if torchmem dies
	// (supervisor.Config.ReaperArgv); the CLI passes itself.
	ReaperArgv []string

	// DB is the history store's path ("": store.DefaultPath); NoHistory
	// records nothing.
	DB        string
	NoHistory bool
	// TUI shows the full-screen live view (needs Terminal); the job writes
	// to torchmem-ID.log meanwhile.
	TUI bool

	// MemoryMax, MemoryHigh and SwapMax are sizes as given ("64G"; "": none).
	MemoryMax, MemoryHigh, SwapMax string
	// OOMScoreAdj of the job, -1000..1000 (nil: inherited).
	OOMScoreAdj *int
	// NProc and NoFile are the job's rlimits (0: unchanged).
	NProc, NoFile uint64
	// NUMA is "auto", "off" or a node number.
	NUMA string
	// GPUThreshold and HostThreshold are the threshold rules as given
	// ("90%"; "": none, though MemoryMax implies a host threshold of 90%).
	GPUThreshold, HostThreshold string
	// PolicyFile is a YAML or TOML file of more rules ("": none).
	PolicyFile string
	// Interval is the sampling tick (at least 10ms), HookInterval the
	// hook's reporting period, Grace the wait between SIGTERM and SIGKILL.
	Interval, HookInterval, Grace time.Duration
	// NoHook and NoCgroup turn off the in-process hook and the job cgroup.
	NoHook, NoCgroup bool
	// RecordHistory is the allocator history's max_entries (0: off).
	RecordHistory int
	// DetectCycles reports reference cycles holding tensors when the
	// garbage collector frees them (the hook's --detect-cycles mode);
	// NoStepPeaks leaves the allocator's peaks alone at optimizer steps.
	DetectCycles, NoStepPeaks bool
	// KeepHookDir and KeepJobOnExit: see supervisor.Config.
	KeepHookDir, KeepJobOnExit bool
	// Lang is the language of the printed post-mortem (see
	// supervisor.Config); the recorded run stays English.
	Lang language.Tag
}

// Result is how the run ended, for the caller to print.
type Result struct {
	// ID is the run's id in the store, or torchmem's pid without history.
	ID string
	// ExitCode is the shell's status: the job's code, or 128+signal.
	ExitCode int
	Summary  supervisor.Summary
	// Recorded: the run is in the history store (Config.DB).
	Recorded bool
	// HistoryErr: finishing the run's record failed (the run did not).
	HistoryErr error
}

// Run runs c.Argv under torchmem from start to finish. Errors are bad
// settings and a job that could not be started at all (its record then
// ends with exit status 127, as a shell's would).
func Run(ctx context.Context, c Config) (*Result, error) {
	sc, err := c.supervisorConfig()
	if err != nil {
		return nil, err
	}
	c.maybeScope()
	rec := c.newRecord(&sc)
	defer rec.close()
	id := rec.run.ID
	sc.CgroupName = "run-" + id
	sc.RunID = id
	sc.SnapshotDir = snapshotDir(rec.db, rec.run.Cwd, id)
	// The private run directory: the hook's files and socket, and the
	// owner record a later run cleans up by if this one dies (made
	// without the hook too, for that record).
	if sc.HookDir, err = os.MkdirTemp("", "torchmem-"+id+"-"); err != nil {
		fmt.Fprintln(c.Notices, say(c.Lang, "no_run_dir", err.Error()))
		sc.Hook = false
	}
	var view *tui.RunView
	if c.TUI {
		if view, err = c.setupTUI(&sc, id); err != nil {
			return nil, err
		}
	}
	if sc.HookDir != "" && !sc.KeepHookDir {
		defer os.RemoveAll(sc.HookDir) // the supervisor removes it too; this covers a failed start
	}
	res, err := supervisor.Run(ctx, sc)
	if view != nil {
		view.Stop(c.Notices)
		fmt.Fprintln(c.Notices, say(c.Lang, "output_in", view.LogPath))
	}
	if err != nil {
		rec.notStarted(err)
		return nil, err
	}
	out := &Result{ID: id, ExitCode: res.ExitCode, Summary: res.Summary, Recorded: rec.db != nil}
	out.HistoryErr = rec.finish(res)
	return out, nil
}
