package cli

import (
	"fmt"
	"os/exec"
	"time"

	"github.com/spf13/cobra"
	"github.com/torchmem/torchmem/internal/jobcgroup"
	"github.com/torchmem/torchmem/internal/policy"
	"github.com/torchmem/torchmem/internal/units"
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
	fl.BoolVar(&f.keepHookDir, "keep-hook-dir", false, "keep the run's private hook directory (snapshots) after the run")
	fl.BoolVar(&f.keepJob, "keep-job-on-exit", false, "let the job outlive torchmem: no parent-death signal, SIGTERM only forwarded, no later cleanup of its cgroup (default: stopping torchmem stops the job)")
	fl.BoolVar(&f.tui, "tui", false, "full-screen live view (memory, events, the tail of the job's output); the job's output goes to torchmem-RUN.log meanwhile")
	fl.StringVar(&f.db, "db", "", "history database (default $XDG_STATE_HOME/torchmem/torchmem.db; root: /var/lib/torchmem/torchmem.db)")
}

func optBytes(flag, s string) (*int64, error) {
	if s == "" {
		return nil, nil
	}
	n, err := units.ParseBytes(s)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("--%s %q: want a size like 64G or 512M", flag, s)
	}
	return &n, nil
}

// limits parses the limit flags. memTotal is the host's MemTotal (nil:
// unknown); notices are limits that are valid but will not act as hoped.
func (f *runFlags) limits(memTotal *uint64) (jobcgroup.Limits, []string, error) {
	var l jobcgroup.Limits
	var notices []string
	for _, m := range []struct {
		flag, val string
		dst       **int64
	}{{"memory-max", f.memoryMax, &l.MemoryMax}, {"memory-high", f.memoryHigh, &l.MemoryHigh}} {
		n, err := optBytes(m.flag, m.val)
		if err != nil {
			return l, nil, err
		}
		if n == nil {
			continue
		}
		note, err := checkLimitSize(m.flag, m.val, *n, memTotal)
		if err != nil {
			return l, nil, err
		}
		if note != "" {
			notices = append(notices, note)
		}
		*m.dst = n
	}
	if l.MemoryHigh != nil && l.MemoryMax != nil && *l.MemoryHigh > *l.MemoryMax {
		return l, nil, fmt.Errorf("--memory-high %s is above --memory-max %s: it would never act (give it below the hard limit)", f.memoryHigh, f.memoryMax)
	}
	var err error
	l.SwapMax, err = optBytes("swap-max", f.swapMax)
	return l, notices, err
}

// checkLimitSize refuses a limit no job can start in and returns a notice
// for one above the host's memory, which the cgroup never reaches (the
// host's OOM killer acts first). Pure.
func checkLimitSize(flag, given string, n int64, memTotal *uint64) (string, error) {
	if n < jobcgroup.MinMemory {
		return "", fmt.Errorf("--%s %s: below the minimum of %s, the least a job can start in (torchmem's trampoline and a bare python3 with the hook need ~8 MiB before the command's first line; importing torch ~250 MiB)",
			flag, given, units.Bytes(jobcgroup.MinMemory))
	}
	if memTotal != nil && uint64(n) > *memTotal {
		return fmt.Sprintf("--%s %s is above this host's memory (MemTotal %s): the cgroup will not reach it before the host runs out; the host's OOM killer acts instead",
			flag, given, units.Bytes(int64(*memTotal))), nil
	}
	return "", nil
}

// rules turns the threshold flags and the policy file into rules.
func (f *runFlags) rules() ([]policy.Rule, error) {
	var out []policy.Rule
	if f.gpuThreshold != "" {
		t, err := policy.ParseThreshold(policy.GPUUsedFraction, f.gpuThreshold)
		if err != nil {
			return nil, fmt.Errorf("--gpu-threshold: %w", err)
		}
		out = append(out, policy.Rule{Name: "gpu-threshold", Metric: policy.GPUUsedFraction, Above: true,
			Threshold: t, Action: policy.Cleanup, Every: policy.DefaultEvery(policy.Cleanup)})
	}
	host := f.hostThreshold
	if host == "" && f.memoryMax != "" {
		host = "90%"
	}
	if host != "" {
		metric := policy.HostUsedFraction
		if f.memoryMax != "" && !f.noCgroup {
			metric = policy.CgroupUsageFraction
		}
		t, err := policy.ParseThreshold(metric, host)
		if err != nil {
			return nil, fmt.Errorf("--host-threshold: %w", err)
		}
		out = append(out, policy.Rule{Name: "host-threshold", Metric: metric, Above: true,
			Threshold: t, Action: policy.Warn, Every: policy.DefaultEvery(policy.Warn)})
	}
	if f.policyFile != "" {
		r, err := policy.Load(f.policyFile)
		if err != nil {
			return nil, err
		}
		out = append(out, r...)
	}
	return out, nil
}

func (f *runFlags) check() error {
	if f.oomScoreAdj < -1000 || f.oomScoreAdj > 1000 {
		return fmt.Errorf("--oom-score-adj %d: want -1000..1000", f.oomScoreAdj)
	}
	if f.interval < 10*time.Millisecond {
		return fmt.Errorf("--interval %s: at least 10ms", f.interval)
	}
	return nil
}

func lookNumactl() string {
	p, err := exec.LookPath("numactl")
	if err != nil {
		return ""
	}
	return p
}
