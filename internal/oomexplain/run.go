package oomexplain

import (
	"strings"

	"golang.org/x/text/language"

	"github.com/torchmem/torchmem/internal/allocconf"
)

// RunEvidence is what `torchmem run`'s supervisor gathered about one
// finished job. The supervisor only gathers; ExplainRun decides. Fields
// are the job's own claims (everything that came through its hook:
// exceptions, OOM observer reports) or torchmem's measurements (exit
// status, cgroup counters, the kernel log), and are kept apart.
type RunEvidence struct {
	// Measured by torchmem.
	ExitCode   int
	Signal     *int
	MainPID    int
	Interrupts int   // times the user pressed Ctrl-C on the terminal
	JobPIDs    []int // every process of the job seen
	CgroupPath string
	// CgroupLimitBytes, CgroupPeakBytes and CgroupOOMKills come from the
	// cgroup files (memory.max / memory.peak / memory.events oom_kill);
	// nil when unknown.
	CgroupLimitBytes *int64
	CgroupPeakBytes  *int64
	CgroupOOMKills   *int64
	// KernelLines are this boot's kernel log lines since the job started
	// (nil when the log was not read).
	KernelLines []string
	// Claimed by the job through its hook.
	HookedPIDs []int // processes whose hook said hello
	Workers    []int // of those, DataLoader workers
	CUDAPIDs   []int // of those, processes with a CUDA build of torch or CUDA devices in use
	Exceptions []JobException
	CUDAOOMs   []JobCUDAOOM
	// PeakAllocated and PeakReserved are the hook's allocator peaks.
	PeakAllocated, PeakReserved int64
	// Growth is a steady host-memory climb per step, when one was seen.
	Growth *Growth
	// CopyOnRead is DataLoader workers' private memory growing while
	// their parent's did not (run_copyonread.go), when it was seen.
	CopyOnRead *CopyOnRead
	// TimeToOOM is torchmem's projection, made before the end, of when
	// the job's memory would reach its limit (nil: none was made).
	TimeToOOM *TimeToOOM
	// PolicyStop is torchmem's own stop of the job by a policy rule (the
	// stop action, or a signal action with a terminating signal), nil
	// when no rule stopped it.
	PolicyStop *PolicyStop
	// AllocConf is the job's PYTORCH_ALLOC_CONF or
	// PYTORCH_CUDA_ALLOC_CONF ("" when neither is set; nil: not known).
	AllocConf *string
	Lang      language.Tag
}

// PolicyStop is a policy rule that stopped the job: its name, why it
// fired ("cgroup.time_to_oom = 14.4s (threshold 15.0s)") and the signal
// it sent first.
type PolicyStop struct {
	Rule   string `json:"rule"`
	Reason string `json:"reason"`
	Signal string `json:"signal"`
	// Metric, Value and Threshold are Reason's parts as written there
	// ("cgroup.time_to_oom", "14.4s", "15.0s"), so that the verdict words
	// the condition in the reader's language; empty in runs recorded
	// before they were kept, which show Reason as it is.
	Metric    string `json:"metric,omitempty"`
	Value     string `json:"value,omitempty"`
	Threshold string `json:"threshold,omitempty"`
}

// TimeToOOM is a projection of the time until a resource's usage reaches
// its limit at the growth rate then measured (policy.Project), and how
// long before the end of the run it was made.
type TimeToOOM struct {
	// Resource is "cgroup" (usage against the job cgroup's limit) or
	// "gpuN" (device N's used memory against its total).
	Resource string `json:"resource"`
	// Seconds is the projected time to the limit.
	Seconds        float64 `json:"seconds"`
	BytesPerSecond float64 `json:"bytes_per_second"`
	// Before is the measured time from the projection to the end of the
	// run (the job's exit), seconds.
	Before float64 `json:"before_end_s"`
	// Rule names the time-to-OOM rule that fired on this projection, ""
	// when none did (then it is the last projection made).
	Rule string `json:"rule,omitempty"`
}

// JobException is an uncaught exception the job's hook reported.
type JobException struct {
	PID  int
	Type string
	Text string
	OOM  bool // the hook classified it as an out-of-memory error
}

// JobCUDAOOM is what the hook's OOM observer reported (sizes in bytes,
// -1 when not reported).
type JobCUDAOOM struct {
	PID                   int
	Device                int
	Requested, DeviceFree int64
	Allocated, Reserved   int64
}

// Growth is a steady climb of the job's memory with its steps.
type Growth struct {
	BytesPerStep     float64
	FromStep, ToStep int64
	R2               float64
}

// Causes of a run's end, most specific first. Values are stored with
// each run.
const (
	CauseOK            = "ok"
	CauseExitCode      = "exit-code"
	CauseSignal        = "signal"
	CauseCgroupOOMKill = "cgroup-oom-kill"
	CauseHostOOMKill   = "host-oom-kill"
	CauseCUDAOOM       = "cuda-oom"
	CauseWorkerKilled  = "dataloader-worker-killed"
	// CausePolicyStop: a policy rule stopped the job before the kernel
	// or CUDA ran out of memory (it ended by the rule's signal or exited
	// after catching it).
	CausePolicyStop = "policy-stop"
)

// RunVerdict is the post-mortem of a run.
type RunVerdict struct {
	Cause   string
	Verdict string
	// Victims are the job's processes the kernel's OOM killer killed.
	Victims []RunVictim
	// KernelLines are the kill lines of the kernel's reports, for people.
	KernelLines []string
	// Incidents are the job's incidents, explained.
	Incidents []Incident
	// Exception is the job's last uncaught exception, one line.
	Exception string
	// Recommendations merge the incidents' advice, most useful first.
	Recommendations []string
	// Notes say which evidence is the job's claim and which was measured,
	// and where they disagree.
	Notes []string
}

// RunVictim is one OOM-killed process of the job.
type RunVictim struct {
	PID     int    `json:"pid"`
	Comm    string `json:"comm"`
	Worker  bool   `json:"dataloader_worker"`
	Main    bool   `json:"main"`
	AnonRSS int64  `json:"anon_rss,omitempty"` // bytes, from the kill line
}

// ExplainRun decides why a run ended and what to change.
func ExplainRun(ev RunEvidence) RunVerdict {
	incs := runIncidents(ev)
	var rv RunVerdict
	rv.Victims, rv.KernelLines = runVictims(ev, incs)
	rv.Exception = lastException(ev)
	rv.Cause = runCause(ev, rv, incs)
	notes := append(claimNotes(ev, incs), timeToOOMNotes(ev, rv)...)
	ctx := runContext(ev)
	ExplainAll(incs, ctx)
	rv.Incidents = incs
	rv.Verdict = render(ev.Lang, runVerdictMsg(ev, rv, incs))
	rv.Recommendations = runAdvice(ev, rv, incs)
	rv.Notes = renderAll(ev.Lang, notes)
	return rv
}

func runContext(ev RunEvidence) Context {
	ctx := Context{JobPIDs: ev.JobPIDs, CgroupPath: ev.CgroupPath, SameHost: true, Supervised: true, Lang: ev.Lang, MemoryStats: map[string]int64{},
		Leak: ev.Growth != nil}
	if ev.AllocConf != nil {
		if c, err := allocconf.Parse(*ev.AllocConf); err == nil {
			ctx.AllocConf = &c
		}
	}
	if ev.CgroupLimitBytes != nil {
		ctx.CgroupLimitBytes = *ev.CgroupLimitBytes
	}
	if ev.PeakAllocated > 0 {
		ctx.MemoryStats["allocated_bytes.all.peak"] = ev.PeakAllocated
	}
	if ev.PeakReserved > 0 {
		ctx.MemoryStats["reserved_bytes.all.peak"] = ev.PeakReserved
	}
	return ctx
}

// lastException is the last exception's last line, with its type.
func lastException(ev RunEvidence) string {
	if len(ev.Exceptions) == 0 {
		return ""
	}
	x := ev.Exceptions[len(ev.Exceptions)-1]
	text := strings.TrimRight(x.Text, "\n")
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		text = text[i+1:]
	}
	if short := x.Type[strings.LastIndexByte(x.Type, '.')+1:]; !strings.HasPrefix(text, short) && !strings.HasPrefix(text, x.Type) {
		text = x.Type + ": " + text
	}
	return text
}
