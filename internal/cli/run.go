package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/torchmem/torchmem/internal/gpu"
	"github.com/torchmem/torchmem/internal/procfs"
	"github.com/torchmem/torchmem/internal/store"
	"github.com/torchmem/torchmem/internal/supervisor"
	"golang.org/x/sys/unix"
)

func init() { register("run", newRunCmd) }

func newRunCmd(env *Env) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [flags] -- COMMAND [ARG...]",
		Short: "Run a training command under memory limits with the PyTorch hook, live status, threshold actions, history and a post-mortem",
		Long: `Run COMMAND exactly as a shell would (same stdout/stderr, same exit status) inside
its own memory cgroup and process group, with the in-process PyTorch hook, and
explain at the end how it went: peaks, whether and why it died, what to change.`,
		Example: `  torchmem run --memory-max 64G --gpu-threshold 90% --numa auto -- python train.py --epochs 3
  torchmem run -- torchrun --nproc-per-node 8 train.py`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("no command to run: torchmem run [flags] -- COMMAND [ARG...]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			f.oomSet = cmd.Flags().Changed("oom-score-adj")
			return runRun(env, &f, args)
		},
	}
	cmd.Flags().SetInterspersed(false)
	f.register(cmd)
	return cmd
}

func runRun(env *Env, f *runFlags, argv []string) error {
	cfg, err := runConfig(env, f, argv)
	if err != nil {
		return err
	}
	runMaybeScope(env, f)
	var db *store.DB
	run := &store.Run{Command: argv, Start: time.Now(), Labels: store.LabelsFromEnv(cfg.Env), Limits: runLimitsJSON(f)}
	run.Cwd, _ = os.Getwd()
	if !f.noHistory {
		db = runOpenHistory(f.db, env.Stderr)
	}
	if db != nil {
		defer db.Close()
		if err := db.CreateRun(run); err != nil {
			fmt.Fprintf(env.Stderr, "torchmem: history off: %v\n", err)
			db.Close()
			db = nil
		} else {
			cfg.Rec = &runRecorder{db: db, id: run.ID, warn: env.Stderr}
		}
	}
	if run.ID == "" {
		run.ID = fmt.Sprintf("%d", os.Getpid())
	}
	cfg.CgroupName = "run-" + run.ID
	cfg.SnapshotDir = runSnapshotDir(db, run.Cwd, run.ID)
	// The private run directory: the hook's files and socket, and the
	// owner record a later run cleans up by if this one dies (made
	// without the hook too, for that record).
	if cfg.HookDir, err = os.MkdirTemp("", "torchmem-"+run.ID+"-"); err != nil {
		fmt.Fprintf(env.Stderr, "torchmem: no run directory (in-process hook off): %v\n", err)
		cfg.Hook = false
	}
	var tui *runTUI
	if f.tui {
		if tui, err = runSetupTUI(env, &cfg, run.ID, argv); err != nil {
			return err
		}
	}
	if cfg.HookDir != "" && !cfg.KeepHookDir {
		defer os.RemoveAll(cfg.HookDir) // the supervisor removes it too; this covers a failed start
	}
	res, err := supervisor.Run(context.Background(), cfg)
	if tui != nil {
		tui.stop(env.Stderr)
		fmt.Fprintf(env.Stderr, "torchmem: the job's output is in %s\n", tui.logPath)
	}
	if err != nil {
		if db != nil {
			code := 127
			_ = db.FinishRun(run.ID, store.Finish{End: time.Now(), Status: store.StatusExited, ExitCode: &code, Summary: runJSON(map[string]string{"error": err.Error()})})
		}
		return err
	}
	res.Summary.Print(env.Stderr, run.ID)
	if db != nil {
		if err := db.FinishRun(run.ID, finishOf(res)); err != nil {
			fmt.Fprintf(env.Stderr, "torchmem: history: %v\n", err)
		}
		fmt.Fprintln(env.Stderr, runDetailsHint(run.ID, f.db))
	}
	if res.ExitCode == 0 {
		return nil
	}
	return &ExitError{Code: res.ExitCode}
}

func runConfig(env *Env, f *runFlags, argv []string) (supervisor.Config, error) {
	cfg := supervisor.Config{Argv: argv, Env: os.Environ(), Notices: env.Stderr, ProcRoot: env.ProcRoot, SysRoot: env.SysRoot,
		Cgroup: !f.noCgroup, NUMA: f.numa, Numactl: lookNumactl(), Interval: f.interval, Hook: !f.noHook,
		HookInterval: f.hookInterval, RecordHistory: f.recordHistory, Grace: f.grace, KeepHookDir: f.keepHookDir,
		KeepJobOnExit: f.keepJob,
		KernelLog:     supervisor.KmsgLog(env.ProcRoot)}
	if err := f.check(); err != nil {
		return cfg, err
	}
	var err error
	var notices []string
	if cfg.Limits, notices, err = f.limits(hostMemTotal(env.ProcRoot)); err != nil {
		return cfg, err
	}
	for _, n := range notices {
		fmt.Fprintf(env.Stderr, "torchmem: %s\n", n)
	}
	if cfg.Rules, err = f.rules(); err != nil {
		return cfg, err
	}
	if f.oomSet {
		cfg.OOMScoreAdj = &f.oomScoreAdj
	}
	if f.nproc > 0 {
		cfg.NProc = &f.nproc
	}
	if f.nofile > 0 {
		cfg.NoFile = &f.nofile
	}
	if cfg.Self, err = os.Executable(); err != nil {
		return cfg, fmt.Errorf("find torchmem's own binary for the job trampoline: %w", err)
	}
	cfg.StatusLine = isTerminal(env.Stderr)
	if pg, err := unix.IoctlGetInt(int(os.Stdin.Fd()), unix.TIOCGPGRP); err == nil && pg == unix.Getpgrp() {
		cfg.Interactive = true
	}
	b, notice := gpu.Open(gpu.Options{SysRoot: env.SysRoot, ProcRoot: env.ProcRoot})
	if b != nil && b.Info().Backend != "none" {
		cfg.GPU = b
	} else if f.gpuThreshold != "" || f.numa == "auto" {
		fmt.Fprintf(env.Stderr, "torchmem: %s\n", notice)
	}
	return cfg, nil
}

// hostMemTotal is MemTotal from PROCROOT/meminfo, nil when unreadable.
func hostMemTotal(procRoot string) *uint64 {
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return nil
	}
	m, err := fs.Meminfo()
	if err != nil {
		return nil
	}
	return m.MemTotalBytes
}

func finishOf(res *supervisor.Result) store.Finish {
	s := res.Summary
	fin := store.Finish{End: time.Now(), Status: store.StatusExited, Peaks: s.Peaks, Summary: runJSON(s)}
	code := s.ExitCode
	switch {
	case s.Cause == supervisor.CauseCgroupOOMKill || s.Cause == supervisor.CauseHostOOMKill:
		fin.Status, fin.Signal = store.StatusOOMKilled, s.Signal
	case s.Signal != nil:
		fin.Status, fin.Signal = store.StatusKilled, s.Signal
	default:
		fin.ExitCode = &code
	}
	return fin
}

func runLimitsJSON(f *runFlags) json.RawMessage {
	m := map[string]any{}
	for k, v := range map[string]string{"memory_max": f.memoryMax, "memory_high": f.memoryHigh, "swap_max": f.swapMax,
		"gpu_threshold": f.gpuThreshold, "host_threshold": f.hostThreshold, "policy": f.policyFile, "numa": f.numa} {
		if v != "" {
			m[k] = v
		}
	}
	if f.oomSet {
		m["oom_score_adj"] = f.oomScoreAdj
	}
	m["interval"] = f.interval.String()
	return runJSON(m)
}

func runJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// runDetailsHint is the last line after a run: the commands that show it,
// with the --db it was recorded in (without it they would look in the
// default store and not find the run).
func runDetailsHint(id, db string) string {
	opt := ""
	if db != "" {
		opt = " --db " + shellQuote(db)
	}
	return fmt.Sprintf("torchmem: details: torchmem show %s%s; report: torchmem report %s%s --html torchmem-%s.html", id, opt, id, opt, id)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// runSnapshotDir is where the run's memory snapshots are kept (OOM dumps,
// the snapshot action): next to the history store, else in the working
// directory. Inside the private hook dir they were deleted with it.
func runSnapshotDir(db *store.DB, cwd, id string) string {
	if db != nil {
		return filepath.Join(filepath.Dir(db.Path()), "snapshots", id)
	}
	return filepath.Join(cwd, "torchmem-"+id+"-snapshots")
}
