package supervisor

import (
	"slices"
	"time"

	"golang.org/x/text/language"

	"github.com/torchmem/torchmem/internal/cgroup"
	"github.com/torchmem/torchmem/internal/hook"
	"github.com/torchmem/torchmem/internal/oomexplain"
	"github.com/torchmem/torchmem/internal/store"
)

// Causes of a run's end, most specific first (internal/oomexplain owns
// them: it decides the cause).
const (
	CauseOK            = oomexplain.CauseOK
	CauseExitCode      = oomexplain.CauseExitCode
	CauseSignal        = oomexplain.CauseSignal
	CauseCgroupOOMKill = oomexplain.CauseCgroupOOMKill
	CauseHostOOMKill   = oomexplain.CauseHostOOMKill
	CauseCUDAOOM       = oomexplain.CauseCUDAOOM
	CauseWorkerKilled  = oomexplain.CauseWorkerKilled
	CausePolicyStop    = oomexplain.CausePolicyStop
)

// Summary is the post-mortem, printed at the end and stored with the run.
type Summary struct {
	ExitCode int     `json:"exit_code"`
	Signal   *int    `json:"signal,omitempty"`
	Duration float64 `json:"duration_s"`
	Cause    string  `json:"cause"`
	Verdict  string  `json:"verdict"`
	// Victims are the processes the kernel OOM killer killed.
	Victims []Victim `json:"victims,omitempty"`
	// Cgroup: where the job ran, its limit and its memory event counters.
	Cgroup       string         `json:"cgroup,omitempty"`
	CgroupLimit  *int64         `json:"cgroup_limit,omitempty"`
	CgroupEvents *cgroup.Events `json:"cgroup_events,omitempty"`
	KernelLines  []string       `json:"kernel_lines,omitempty"`
	CUDAOOM      *hook.OOM      `json:"cuda_oom,omitempty"`
	// Fragmentation is "fragmentation" when the CUDA OOM's verdict (or one
	// it cannot rule out) is the allocator's fragmentation.
	Fragmentation   string      `json:"fragmentation,omitempty"`
	Exception       string      `json:"exception,omitempty"`
	Peaks           store.Peaks `json:"peaks"`
	Steps           int64       `json:"steps"`
	PerStep         *StepPeaks  `json:"per_step,omitempty"`
	LastStep        *int64      `json:"last_step,omitempty"`
	OrphansKilled   int         `json:"orphans_killed"`
	Hooked          int         `json:"hooked_processes"`
	Recommendations []string    `json:"recommendations,omitempty"`
	// Growth is set when the job's memory climbed steadily with its steps
	// up to an OOM kill (a leak).
	Growth *Growth `json:"growth,omitempty"`
	// CopyOnRead is set when DataLoader workers' private memory grew while
	// their parent's did not (copy-on-read), however the run ended.
	CopyOnRead *CopyOnRead `json:"copy_on_read,omitempty"`
	// TimeToOOM is torchmem's time-to-OOM projection before the end, when
	// the post-mortem states one (an OOM end, or a rule acted on it).
	TimeToOOM *oomexplain.TimeToOOM `json:"time_to_oom,omitempty"`
	// Incidents are the OOM incidents about this job as internal/oomexplain
	// (shared with `torchmem oom`) explains them.
	Incidents []Explained `json:"incidents,omitempty"`
	// Notes say which evidence is the job's claim (through its hook) and
	// which torchmem measured, and where they disagree.
	Notes []string `json:"notes,omitempty"`
	// ZH is the verdict, recommendations, notes and explanations in
	// Chinese, for show and the report read in Chinese later (always
	// stored: the JSON does not change with the language of the run).
	ZH *SummaryText `json:"zh,omitempty"`
	// lang is Config.Lang, for Print only (postmortem_lang.go).
	lang language.Tag
}

// Explained is one incident as internal/oomexplain explains it.
type Explained struct {
	Kind        oomexplain.Kind        `json:"kind"`
	PIDs        []int                  `json:"pids,omitempty"`
	Explanation oomexplain.Explanation `json:"explanation"`
}

// Victim is one OOM-killed process.
type Victim = oomexplain.RunVictim

// evidence is everything the post-mortem looks at.
type evidence struct {
	code    int
	sig     *int
	mainPID int
	dur     time.Duration
	events  *cgroup.Events
	limit   *int64
	kernel  []string
	// allocPeaks are the supervisor's peaks (the hook's allocator peaks
	// among them), for the explanations.
	allocPeaks store.Peaks
	ooms       []pidOOM
	excs       []pidException
	hello      map[int]*hook.Hello
	cudaPIDs   map[int]bool
	jobPIDs    map[int]bool
	cgroupRel  string
	interrupts int
	growth     *Growth
	copyOnRead *CopyOnRead
	timeToOOM  *oomexplain.TimeToOOM
	policyStop *oomexplain.PolicyStop
	allocConf  string // the job's PYTORCH_ALLOC_CONF or PYTORCH_CUDA_ALLOC_CONF
}

// runEvidence is the evidence in internal/oomexplain's terms: what the
// supervisor measured, and what the job's hook claimed.
func (e evidence) runEvidence() oomexplain.RunEvidence {
	ev := oomexplain.RunEvidence{ExitCode: e.code, Signal: e.sig, MainPID: e.mainPID, CgroupPath: e.cgroupRel,
		CgroupLimitBytes: e.limit, KernelLines: e.kernel, Growth: e.growth, CopyOnRead: e.copyOnRead, Interrupts: e.interrupts,
		PeakAllocated: e.allocPeaks.Value(store.PeakAllocPeakAllocated), PeakReserved: e.allocPeaks.Value(store.PeakAllocPeakReserved)}
	ev.TimeToOOM, ev.PolicyStop = e.timeToOOM, e.policyStop
	ev.AllocConf = &e.allocConf // known: the job's environment is torchmem's to give
	if p, ok := e.allocPeaks.Get(store.PeakCgroupUsage); ok {
		ev.CgroupPeakBytes = &p
	}
	if e.events != nil && e.events.OOMKill != nil {
		n := int64(*e.events.OOMKill)
		ev.CgroupOOMKills = &n
	}
	for pid := range e.jobPIDs {
		ev.JobPIDs = append(ev.JobPIDs, pid)
	}
	for pid, h := range e.hello {
		ev.HookedPIDs = append(ev.HookedPIDs, pid)
		if h.Worker {
			ev.Workers = append(ev.Workers, pid)
		}
		if h.CUDA != "" || e.cudaPIDs[pid] {
			ev.CUDAPIDs = append(ev.CUDAPIDs, pid)
		}
	}
	for _, x := range e.excs {
		ev.Exceptions = append(ev.Exceptions, oomexplain.JobException{PID: x.PID, Type: x.ExcType, Text: x.Text, OOM: x.OOM})
	}
	for _, o := range e.ooms {
		j := oomexplain.JobCUDAOOM{PID: o.PID, Device: o.Device, Requested: o.Alloc, DeviceFree: o.DeviceFree, Allocated: -1, Reserved: -1}
		if o.Stats != nil {
			j.Allocated, j.Reserved = o.Stats.Allocated, o.Stats.Reserved
		}
		ev.CUDAOOMs = append(ev.CUDAOOMs, j)
	}
	return ev
}

// classify asks internal/oomexplain for the post-mortem and keeps it in
// the run's summary.
func classify(e evidence) Summary {
	s := Summary{ExitCode: e.code, Signal: e.sig, Duration: e.dur.Seconds(), CgroupEvents: e.events, CgroupLimit: e.limit, Cgroup: e.cgroupRel}
	rv := oomexplain.ExplainRun(e.runEvidence())
	s.Cause, s.Verdict, s.Victims, s.KernelLines = rv.Cause, rv.Verdict, rv.Victims, rv.KernelLines
	s.Exception, s.Recommendations, s.Notes = rv.Exception, rv.Recommendations, rv.Notes
	for _, inc := range rv.Incidents {
		s.Incidents = append(s.Incidents, Explained{Kind: inc.Kind, PIDs: inc.PIDs, Explanation: *inc.Explanation})
		if ex := inc.Explanation; inc.CUDA != nil && (ex.Verdict == oomexplain.VerdictFragmentation || slices.Contains(ex.Alternatives, oomexplain.VerdictFragmentation)) {
			s.Fragmentation = "fragmentation"
		}
	}
	if len(e.ooms) > 0 {
		o := e.ooms[len(e.ooms)-1].OOM
		s.CUDAOOM = &o
	}
	if rv.Cause == CauseCgroupOOMKill || rv.Cause == CauseHostOOMKill {
		s.Growth = e.growth
	}
	s.CopyOnRead = e.copyOnRead
	if oom := rv.Cause == CauseCgroupOOMKill || rv.Cause == CauseHostOOMKill || rv.Cause == CauseCUDAOOM || rv.Cause == CausePolicyStop; e.timeToOOM != nil && (oom || e.timeToOOM.Rule != "") {
		s.TimeToOOM = e.timeToOOM
	}
	return s
}
