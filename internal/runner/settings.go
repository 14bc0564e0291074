package runner

import (
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/torchmem/torchmem/internal/gpu"
	"github.com/torchmem/torchmem/internal/jobcgroup"
	"github.com/torchmem/torchmem/internal/policy"
	"github.com/torchmem/torchmem/internal/procfs"
	"github.com/torchmem/torchmem/internal/supervisor"
	"github.com/torchmem/torchmem/internal/units"
	"golang.org/x/sys/unix"
)

// supervisorConfig checks the settings and turns them into the
// supervisor's configuration (without the record's parts: CgroupName,
// SnapshotDir, HookDir, Rec). Notices about valid settings that will not
// act as hoped go to c.Notices.
func (c *Config) supervisorConfig() (supervisor.Config, error) {
	env := c.Env
	if env == nil {
		env = os.Environ()
	}
	sc := supervisor.Config{Argv: c.Argv, Env: env, Notices: c.Notices, ProcRoot: c.ProcRoot, SysRoot: c.SysRoot,
		Cgroup: !c.NoCgroup, NUMA: c.NUMA, Numactl: lookNumactl(), Interval: c.Interval, Hook: !c.NoHook,
		HookInterval: c.HookInterval, RecordHistory: c.RecordHistory, Grace: c.Grace, KeepHookDir: c.KeepHookDir,
		DetectCycles: cycleReports(c.DetectCycles), NoStepPeaks: c.NoStepPeaks,
		KeepJobOnExit: c.KeepJobOnExit, Lang: c.Lang, ReaperArgv: c.ReaperArgv,
		KernelLog: supervisor.KmsgLog(c.ProcRoot)}
	if err := c.check(); err != nil {
		return sc, err
	}
	var err error
	var notices []string
	if sc.Limits, notices, err = c.limits(hostMemTotal(c.ProcRoot)); err != nil {
		return sc, err
	}
	for _, n := range notices {
		fmt.Fprintf(c.Notices, "torchmem: %s\n", n)
	}
	if sc.Rules, err = c.rules(); err != nil {
		return sc, err
	}
	sc.OOMScoreAdj = c.OOMScoreAdj
	if c.NProc > 0 {
		sc.NProc = &c.NProc
	}
	if c.NoFile > 0 {
		sc.NoFile = &c.NoFile
	}
	if sc.Self, err = os.Executable(); err != nil {
		return sc, fmt.Errorf("find torchmem's own binary for the job trampoline: %w", err)
	}
	sc.StatusLine = c.Terminal
	if pg, err := unix.IoctlGetInt(int(os.Stdin.Fd()), unix.TIOCGPGRP); err == nil && pg == unix.Getpgrp() {
		sc.Interactive = true
	}
	b, notice := gpu.Open(gpu.Options{SysRoot: c.SysRoot, ProcRoot: c.ProcRoot})
	if b != nil && b.Info().Backend != "none" {
		sc.GPU = b
	} else if c.GPUThreshold != "" || c.NUMA == "auto" {
		fmt.Fprintf(c.Notices, "torchmem: %s\n", notice)
	}
	return sc, nil
}

func (c *Config) check() error {
	if adj := c.OOMScoreAdj; adj != nil && (*adj < -1000 || *adj > 1000) {
		return fmt.Errorf("--oom-score-adj %d: want -1000..1000", *adj)
	}
	if c.Interval < 10*time.Millisecond {
		return fmt.Errorf("--interval %s: at least 10ms", c.Interval)
	}
	return nil
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

func lookNumactl() string {
	p, err := exec.LookPath("numactl")
	if err != nil {
		return ""
	}
	return p
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

// limits parses the limit settings. memTotal is the host's MemTotal (nil:
// unknown); notices are limits that are valid but will not act as hoped.
func (c *Config) limits(memTotal *uint64) (jobcgroup.Limits, []string, error) {
	var l jobcgroup.Limits
	var notices []string
	for _, m := range []struct {
		flag, val string
		dst       **int64
	}{{"memory-max", c.MemoryMax, &l.MemoryMax}, {"memory-high", c.MemoryHigh, &l.MemoryHigh}} {
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
		return l, nil, fmt.Errorf("--memory-high %s is above --memory-max %s: it would never act (give it below the hard limit)", c.MemoryHigh, c.MemoryMax)
	}
	var err error
	l.SwapMax, err = optBytes("swap-max", c.SwapMax)
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

// rules turns the threshold settings and the policy file into rules.
func (c *Config) rules() ([]policy.Rule, error) {
	var out []policy.Rule
	if c.GPUThreshold != "" {
		t, err := policy.ParseThreshold(policy.GPUUsedFraction, c.GPUThreshold)
		if err != nil {
			return nil, fmt.Errorf("--gpu-threshold: %w", err)
		}
		out = append(out, policy.Rule{Name: "gpu-threshold", Metric: policy.GPUUsedFraction, Above: true,
			Threshold: t, Action: policy.Cleanup, Every: policy.DefaultEvery(policy.Cleanup)})
	}
	host := c.HostThreshold
	if host == "" && c.MemoryMax != "" {
		host = "90%"
	}
	if host != "" {
		metric := policy.HostUsedFraction
		if c.MemoryMax != "" && !c.NoCgroup {
			metric = policy.CgroupUsageFraction
		}
		t, err := policy.ParseThreshold(metric, host)
		if err != nil {
			return nil, fmt.Errorf("--host-threshold: %w", err)
		}
		out = append(out, policy.Rule{Name: "host-threshold", Metric: metric, Above: true,
			Threshold: t, Action: policy.Warn, Every: policy.DefaultEvery(policy.Warn)})
	}
	if c.PolicyFile != "" {
		r, err := policy.Load(c.PolicyFile)
		if err != nil {
			return nil, err
		}
		out = append(out, r...)
	}
	return out, nil
}

// DetectCycleReports is how many tensor cycles the hook reports per
// process with --detect-cycles before it stops looking.
const DetectCycleReports = 20

func cycleReports(on bool) int {
	if on {
		return DetectCycleReports
	}
	return 0
}
