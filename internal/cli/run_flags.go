package cli

import (
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/torchmem/torchmem/internal/runner"
)

// runFlags are torchmem run's options as typed on the command line.
type runFlags struct {
	memoryMax, memoryHigh, swapMax string
	oomScoreAdj                    int
	oomSet                         bool // --oom-score-adj given (0 is a value too)
	nproc, nofile                  uint64
	numa                           string
	gpuThreshold, hostThreshold    string
	policyFile                     string
	interval, hookInterval, grace  time.Duration
	noHook, noCgroup, noHistory    bool
	recordHistory                  int
	keepHookDir, tui, keepJob      bool
	detectCycles, noStepPeaks      bool
	db                             string
}

func (f *runFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.memoryMax, "memory-max", "", "hard memory limit of the job's cgroup (e.g. 64G); the kernel OOM-kills inside the job above it")
	fl.StringVar(&f.memoryHigh, "memory-high", "", "throttle-and-reclaim level (cgroup v2 memory.high; v1: soft limit)")
	fl.StringVar(&f.swapMax, "swap-max", "", "swap the job may use (v2 memory.swap.max; v1: memsw = max + swap)")
	fl.IntVar(&f.oomScoreAdj, "oom-score-adj", 0, "oom_score_adj of the job, -1000..1000: negative protects it from the OOM killer, positive offers it as the victim (default: inherited)")
	fl.Uint64Var(&f.nproc, "nproc", 0, "RLIMIT_NPROC of the job (0: unchanged)")
	fl.Uint64Var(&f.nofile, "nofile", 0, "RLIMIT_NOFILE of the job (0: unchanged)")
	fl.StringVar(&f.numa, "numa", "off", "bind CPUs and memory to a NUMA node: auto (the node of the job's GPUs), a node number, or off")
	fl.StringVar(&f.gpuThreshold, "gpu-threshold", "", "when GPU memory used crosses this (e.g. 90%), the hook frees the allocator cache (gc.collect + empty_cache, at most every 30 s)")
	fl.StringVar(&f.hostThreshold, "host-threshold", "", "warn when the job's cgroup (or the host, without a limit) uses this much (default 90% with --memory-max)")
	fl.StringVar(&f.policyFile, "policy", "", "YAML or TOML file of threshold rules (see docs/run.md)")
	fl.DurationVar(&f.interval, "interval", time.Second, "sampling interval (cgroup events sample at once regardless)")
	fl.DurationVar(&f.hookInterval, "hook-interval", time.Second, "how often hooked processes report allocator stats")
	fl.DurationVar(&f.grace, "grace", 10*time.Second, "after SIGTERM (second Ctrl-C or a stop rule), SIGKILL the job this much later")
	fl.BoolVar(&f.noHook, "no-hook", false, "do not load the in-process PyTorch hook")
	fl.BoolVar(&f.noCgroup, "no-cgroup", false, "monitor only: no cgroup, no limits")
	fl.BoolVar(&f.noHistory, "no-history", false, "do not record the run in the history store")
	fl.IntVar(&f.recordHistory, "record-history", 0, "record allocator history (max_entries) so a CUDA OOM dumps a snapshot; costs ~20% step time")
	fl.BoolVar(&f.detectCycles, "detect-cycles", false, "report reference cycles that held tensors when Python's garbage collector frees them, with their types and creating lines (tracemalloc on: slower Python)")
	fl.BoolVar(&f.noStepPeaks, "no-step-peaks", false, "do not reset the allocator's peaks at each optimizer step (no measured per-step peaks; the job's own max_memory_allocated() is then the peak since start)")
	fl.BoolVar(&f.keepHookDir, "keep-hook-dir", false, "keep the run's private hook directory (snapshots) after the run")
	fl.BoolVar(&f.keepJob, "keep-job-on-exit", false, "let the job outlive torchmem: no parent-death signal, SIGTERM only forwarded, no later cleanup of its cgroup (default: stopping torchmem stops the job)")
	fl.BoolVar(&f.tui, "tui", false, "full-screen live view (memory, events, the tail of the job's output); the job's output goes to torchmem-RUN.log meanwhile")
	fl.StringVar(&f.db, "db", "", "history database (default $XDG_STATE_HOME/torchmem/torchmem.db; root: /var/lib/torchmem/torchmem.db)")
}

// config is the run the flags ask for; the runner checks the settings.
func (f *runFlags) config(env *Env, argv []string) runner.Config {
	c := runner.Config{Argv: argv, Notices: env.Stderr, Terminal: isTerminal(env.Stderr), ProcRoot: env.ProcRoot,
		SysRoot: env.SysRoot, ScopeArgs: os.Args[1:], DB: f.db, NoHistory: f.noHistory, TUI: f.tui,
		MemoryMax: f.memoryMax, MemoryHigh: f.memoryHigh, SwapMax: f.swapMax, NProc: f.nproc, NoFile: f.nofile,
		NUMA: f.numa, GPUThreshold: f.gpuThreshold, HostThreshold: f.hostThreshold, PolicyFile: f.policyFile,
		Interval: f.interval, HookInterval: f.hookInterval, Grace: f.grace, NoHook: f.noHook, NoCgroup: f.noCgroup,
		RecordHistory: f.recordHistory, DetectCycles: f.detectCycles, NoStepPeaks: f.noStepPeaks, KeepHookDir: f.keepHookDir, KeepJobOnExit: f.keepJob, Lang: env.lang()}
	if f.oomSet {
		c.OOMScoreAdj = &f.oomScoreAdj
	}
	if env.Self != "" {
		c.ReaperArgv = []string{env.Self, reapCommand}
	}
	return c
}
