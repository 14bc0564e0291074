package supervisor

import (
	"strings"
	"time"

	"github.com/torchmem/torchmem/internal/hook"
	"github.com/torchmem/torchmem/internal/jobcgroup"
	"github.com/torchmem/torchmem/internal/oomexplain"
)

// Causes of a run's end, most specific first.
const (
	CauseOK            = "ok"
	CauseExitCode      = "exit-code"
	CauseSignal        = "signal"
	CauseCgroupOOMKill = "cgroup-oom-kill"
	CauseHostOOMKill   = "host-oom-kill"
	CauseCUDAOOM       = "cuda-oom"
	CauseWorkerKilled  = "dataloader-worker-killed"
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
	Cgroup       string            `json:"cgroup,omitempty"`
	CgroupLimit  *int64            `json:"cgroup_limit,omitempty"`
	CgroupEvents *jobcgroup.Events `json:"cgroup_events,omitempty"`
	KernelLines  []string          `json:"kernel_lines,omitempty"`
	CUDAOOM      *hook.OOM         `json:"cuda_oom,omitempty"`
	// Fragmentation is the verdict on a CUDA OOM: "fragmentation" when the
	// allocator held more reserved-but-unallocated memory than requested.
	Fragmentation   string           `json:"fragmentation,omitempty"`
	Exception       string           `json:"exception,omitempty"`
	Peaks           map[string]int64 `json:"peaks"`
	Steps           int64            `json:"steps"`
	PerStep         *StepPeaks       `json:"per_step,omitempty"`
	LastStep        *int64           `json:"last_step,omitempty"`
	OrphansKilled   int              `json:"orphans_killed"`
	Hooked          int              `json:"hooked_processes"`
	Recommendations []string         `json:"recommendations,omitempty"`
	// Growth is set when the job's memory climbed steadily with its steps
	// up to an OOM kill (a leak).
	Growth *Growth `json:"growth,omitempty"`
	// Incidents are the OOM incidents about this job as internal/oomexplain
	// (shared with `torchmem oom`) explains them.
	Incidents []Explained `json:"incidents,omitempty"`
}

// Victim is one OOM-killed process.
type Victim struct {
	PID    int    `json:"pid"`
	Comm   string `json:"comm"`
	Worker bool   `json:"dataloader_worker"`
	Main   bool   `json:"main"`
	// AnonRSS from the kernel's report, bytes; 0 when not reported.
	AnonRSS int64 `json:"anon_rss,omitempty"`
}

// evidence is everything the post-mortem looks at.
type evidence struct {
	code    int
	sig     *int
	mainPID int
	dur     time.Duration
	events  *jobcgroup.Events
	limit   *int64
	kernel  []string
	// allocPeaks are the supervisor's peaks (the hook's allocator peaks
	// among them), for the explanations.
	allocPeaks map[string]int64
	ooms       []hook.OOM
	excs       []hook.Exception
	hello      map[int]*hook.Hello
	jobPIDs    map[int]bool
	cgroupRel  string
}

// victims are the processes of this job the kernel's OOM killer killed, as
// internal/oomexplain (the parser behind `torchmem oom`) reads the kernel
// lines: an incident about the job (naming one of its PIDs or its cgroup)
// with a "Killed process" victim. memcg says whether a cgroup's limit, not
// the host, ran out; lines are the kill lines themselves, for the report.
func (e evidence) victims(incs []oomexplain.Incident) (out []Victim, memcg bool, lines []string) {
	for _, inc := range incs {
		if inc.Kind != oomexplain.KindKernelOOM {
			continue
		}
		for _, r := range inc.Raw {
			if strings.Contains(r, "Killed process") || strings.Contains(r, "oom-kill:") {
				lines = append(lines, r)
			}
		}
		k := inc.Kernel
		if k == nil || k.Victim == nil || !e.victimIsOurs(inc) {
			continue
		}
		v := Victim{PID: k.Victim.PID, Comm: k.Victim.Comm, Main: k.Victim.PID == e.mainPID}
		if h := e.hello[v.PID]; h != nil {
			v.Worker = h.Worker
		}
		if k.Victim.AnonRSSBytes != nil {
			v.AnonRSS = *k.Victim.AnonRSSBytes
		}
		memcg = memcg || k.Constraint == "CONSTRAINT_MEMCG"
		out = append(out, v)
	}
	return out, memcg, lines
}

// victimIsOurs: the killed process is one of the job's, or sat in the
// job's cgroup (a process the supervisor had not seen yet). An incident the
// job only triggered, whose victim was someone else's, does not count.
func (e evidence) victimIsOurs(inc oomexplain.Incident) bool {
	k := inc.Kernel
	if e.jobPIDs[k.Victim.PID] {
		return true
	}
	if e.cgroupRel == "" {
		return false
	}
	if k.TaskMemcg != "" {
		return strings.Contains(k.TaskMemcg, e.cgroupRel)
	}
	for _, r := range inc.Raw {
		if strings.Contains(r, e.cgroupRel) {
			return true
		}
	}
	return false
}

// classify decides the cause; recommendations are added by explain.
func classify(e evidence) Summary {
	s := Summary{ExitCode: e.code, Signal: e.sig, Duration: e.dur.Seconds(), CgroupEvents: e.events, CgroupLimit: e.limit, Cgroup: e.cgroupRel}
	var memcg bool
	incs := e.jobIncidents()
	s.Victims, memcg, s.KernelLines = e.victims(incs)
	s.Incidents = explainIncidents(e, incs)
	oomKills := e.events != nil && e.events.OOMKill != nil && *e.events.OOMKill > 0
	if len(s.Victims) == 0 && oomKills && e.sig != nil && *e.sig == 9 {
		// No kernel log to read (not root, or rotated): the cgroup's
		// counter and a SIGKILLed main process are the evidence.
		s.Victims = []Victim{{PID: e.mainPID, Main: true, Comm: "(main process; kernel log not available)"}}
	}
	if len(e.ooms) > 0 {
		o := e.ooms[len(e.ooms)-1]
		s.CUDAOOM = &o
		s.Fragmentation = fragmentation(o)
	}
	for _, x := range e.excs {
		s.Exception = lastLine(x.Text)
		if short := x.ExcType[strings.LastIndexByte(x.ExcType, '.')+1:]; !strings.HasPrefix(s.Exception, short) {
			s.Exception = x.ExcType + ": " + s.Exception
		}
		if x.OOM && s.CUDAOOM == nil && strings.Contains(x.Text, "CUDA") {
			s.CUDAOOM = &hook.OOM{Time: x.Time}
		}
	}
	workerDied := strings.Contains(s.Exception, "DataLoader worker") && (strings.Contains(s.Exception, "killed") || strings.Contains(s.Exception, "exited unexpectedly"))
	mainKilled := false
	workerKilled := false
	for _, v := range s.Victims {
		mainKilled = mainKilled || v.Main
		workerKilled = workerKilled || !v.Main
	}
	switch {
	case e.code == 0 && len(s.Victims) == 0:
		s.Cause = CauseOK
	case s.CUDAOOM != nil:
		s.Cause = CauseCUDAOOM
	case workerKilled && !mainKilled || workerDied:
		s.Cause = CauseWorkerKilled
	case len(s.Victims) > 0 || oomKills:
		s.Cause = CauseHostOOMKill
		if memcg || oomKills {
			s.Cause = CauseCgroupOOMKill
		}
	case e.sig != nil:
		s.Cause = CauseSignal
	default:
		s.Cause = CauseExitCode
	}
	return s
}

// fragmentation: an OOM while the allocator holds more reserved-but-free
// memory than the request means the free memory was in blocks too small
// (split), which expandable segments avoid.
func fragmentation(o hook.OOM) string {
	if o.Stats == nil {
		return ""
	}
	free := o.Stats.Reserved - o.Stats.Allocated
	if free >= o.Alloc && o.Alloc > 0 {
		return "fragmentation"
	}
	if o.Stats.InactiveSplit > o.Stats.Reserved/5 {
		return "partial fragmentation"
	}
	return "no fragmentation"
}
