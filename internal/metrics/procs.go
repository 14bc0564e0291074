package metrics

import (
	"sort"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/torchmem/torchmem/internal/jobs"
	"github.com/torchmem/torchmem/internal/sample"
	"github.com/torchmem/torchmem/internal/textwrap"
)

// procSource exports the PyTorch jobs found by the sampler: per job an
// info series, totals, and totals per role (main, worker, child), all
// keyed by the job's stable key; per process only when perProcess is on
// (series.go says why and how they are bounded).
type procSource struct {
	max        int
	perProcess bool
	budget     *seriesBudget
}

func newProcSource(o Options) *procSource {
	return &procSource{max: o.MaxProcesses, perProcess: o.ProcessSeries,
		budget: newSeriesBudget(o.MaxProcessSeries, o.ProcessSeriesWindow, o.Notice)}
}

var (
	jobInfo = desc("job_info", "Always 1; names a PyTorch job: who runs it (Kubernetes pod, Slurm job, container, systemd unit; docs/serve.md), its command line (cut to 80 characters) and the torchmem run supervising it (\"\" when none).",
		jobInfoLabelNames...)
	jobProcs = desc("job_processes", "Processes of the job (main, DataLoader workers, children).", jobLabelNames...)
	jobRSS   = desc("job_rss_bytes", "Sum of the job's processes' VmRSS (/proc/<pid>/status); shared pages counted once per process.", jobLabelNames...)
	jobPSS   = desc("job_pss_bytes", "Sum of the job's processes' PSS (smaps_rollup): shared pages split among sharers.", jobLabelNames...)
	jobSwap  = desc("job_swap_bytes", "Sum of the job's processes' VmSwap (/proc/<pid>/status).", jobLabelNames...)
	jobGPU   = desc("job_gpu_memory_bytes", "GPU memory the job's processes hold on all GPUs, from the GPU backend.", jobLabelNames...)
	// Per role: bounded (three roles a job), and stable across worker restarts.
	roleProcs = desc("job_role_processes", "Processes of the job in a role: main (the root), worker (DataLoader and multiprocessing workers), child (anything else).", withRole...)
	roleRSS   = desc("job_role_rss_bytes", "Sum of VmRSS of the job's processes in a role.", withRole...)
	rolePSS   = desc("job_role_pss_bytes", "Sum of PSS of the job's processes in a role (absent while some has no PSS yet).", withRole...)
	roleSwap  = desc("job_role_swap_bytes", "Sum of VmSwap of the job's processes in a role.", withRole...)
	roleGPU   = desc("job_role_gpu_memory_bytes", "GPU memory the job's processes in a role hold, from the GPU backend.", withRole...)
	// GPUs the kubelet assigned to the job's container (pod-resources API).
	jobGPUAssigned = desc("job_gpu_assigned_info", "Always 1; a GPU the kubelet assigned to the job's container (pod-resources API): UUID as dcgm-exporter's UUID label, gpu its index here (\"\" when this node's backend does not list it).",
		append(append([]string(nil), jobLabelNames...), "gpu", "UUID")...)
	// Per process: opt-in (--process-metrics).
	procRSS     = desc("process_rss_bytes", "VmRSS of a job's process (/proc/<pid>/status); only with --process-metrics.", procLabelNames...)
	procPSS     = desc("process_pss_bytes", "PSS of a job's process (smaps_rollup, re-read every --pss-period or when its RSS moves a lot); only with --process-metrics.", procLabelNames...)
	procUSS     = desc("process_uss_bytes", "USS (private clean + dirty) of a job's process (smaps_rollup); only with --process-metrics.", procLabelNames...)
	procSwap    = desc("process_swap_bytes", "VmSwap of a job's process (/proc/<pid>/status); only with --process-metrics.", procLabelNames...)
	procGPU     = desc("process_gpu_memory_bytes", "GPU memory a job's process holds on all GPUs, from the GPU backend; only with --process-metrics.", procLabelNames...)
	procDropped = desc("process_series_dropped", "Job processes left out of the per-process series this scrape: by --max-processes, by --max-process-series, or all of them without --process-metrics (still in the job and role totals).")
	procCreated = desc("process_series_created_total", "Per-process label sets (job, pid) created since the agent started; --max-process-series bounds how many a --process-series-window may create.")
	procCapped  = desc("process_series_limit_reached", "1 while --max-process-series is spent for this window: new processes get no per-process series.")
)

var (
	withRole       = append(append([]string(nil), jobLabelNames...), "role")
	procLabelNames = []string{"job_id", "pid", "role"}
)

func (*procSource) name() string { return "processes" }

func (*procSource) describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{jobInfo, jobProcs, jobRSS, jobPSS, jobSwap, jobGPU,
		roleProcs, roleRSS, rolePSS, roleSwap, roleGPU, jobGPUAssigned,
		procRSS, procPSS, procUSS, procSwap, procGPU, procDropped, procCreated, procCapped} {
		ch <- d
	}
}

func (s *procSource) collect(st *State, ch chan<- prometheus.Metric) error {
	if st.Sample == nil {
		return st.SampleErr
	}
	runOf := map[string]string{}
	for _, r := range st.Runs {
		if r.Job != "" {
			runOf[r.Job] = r.Run.ID
		}
	}
	uuidIndex := map[string]string{}
	for _, d := range st.Sample.GPU.Devices {
		uuidIndex[d.UUID] = itoa(d.Index)
	}
	n := 0
	for i := range st.Sample.Jobs {
		j := &st.Sample.Jobs[i]
		emitJob(ch, j, runOf[j.ID], uuidIndex)
		n += len(j.Processes)
	}
	kept := 0
	if s.perProcess {
		kept = s.emitProcs(ch, st, n)
	}
	gauge(ch, procDropped, float64(n-kept))
	created, capped := s.budget.stats()
	counter(ch, procCreated, float64(created))
	gauge(ch, procCapped, b2f(capped))
	return nil
}

func emitJob(ch chan<- prometheus.Metric, j *sample.Job, run string, uuidIndex map[string]string) {
	t := j.Totals
	l := jobLabels(j)
	gauge(ch, jobInfo, 1, jobInfoLabels(j, textwrap.Cut(j.Command, 80), run)...)
	gauge(ch, jobProcs, float64(t.Processes), l...)
	gauge(ch, jobRSS, float64(t.RSSBytes), l...)
	if t.PSSComplete {
		gauge(ch, jobPSS, float64(t.PSSBytes), l...)
	}
	gauge(ch, jobSwap, float64(t.SwapBytes), l...)
	_, hasGPU := t.Sources["gpu"]
	if hasGPU {
		gauge(ch, jobGPU, float64(t.GPUBytes), l...)
	}
	for _, r := range roleTotals(j.Processes) {
		rl := jobLabels(j, r.role)
		gauge(ch, roleProcs, float64(r.n), rl...)
		gauge(ch, roleRSS, float64(r.rss), rl...)
		if r.pssComplete {
			gauge(ch, rolePSS, float64(r.pss), rl...)
		}
		gauge(ch, roleSwap, float64(r.swap), rl...)
		if hasGPU {
			gauge(ch, roleGPU, float64(r.gpu), rl...)
		}
	}
	if id := j.Identity; id != nil && id.Kubernetes != nil {
		for _, u := range id.Kubernetes.GPUs {
			gauge(ch, jobGPUAssigned, 1, jobLabels(j, uuidIndex[u], u)...)
		}
	}
}

// roleTotal sums one role's processes.
type roleTotal struct {
	role                 string
	n                    int
	rss, pss, swap       uint64
	gpu                  int64
	pssComplete, present bool
}

// roleTotals sums a job's processes by role, in a fixed order; roles
// with no process are left out.
func roleTotals(ps []jobs.Process) []roleTotal {
	order := []string{jobs.RoleMain, jobs.RoleWorker, jobs.RoleChild}
	by := map[string]*roleTotal{}
	for _, r := range order {
		by[r] = &roleTotal{role: r, pssComplete: true}
	}
	for i := range ps {
		p := &ps[i]
		r := by[p.Role]
		if r == nil {
			r = by[jobs.RoleChild]
		}
		r.present = true
		r.n++
		r.rss += u64(p.RSSBytes)
		r.swap += u64(p.SwapBytes)
		r.gpu += i64(p.GPUBytes)
		if p.PSSBytes == nil {
			r.pssComplete = false
		} else {
			r.pss += *p.PSSBytes
		}
	}
	var out []roleTotal
	for _, r := range order {
		if by[r].present {
			out = append(out, *by[r])
		}
	}
	return out
}

type jobProc struct {
	job string
	p   *jobs.Process
}

// emitProcs exports per-process series within both bounds and returns
// how many processes got them.
func (s *procSource) emitProcs(ch chan<- prometheus.Metric, st *State, n int) int {
	all := s.bounded(st, n)
	keys := make([]string, len(all))
	for i, kp := range all {
		keys[i] = kp.job + "\x00" + strconv.Itoa(kp.p.PID)
	}
	ok := s.budget.admit(st.Sample.Time, keys)
	kept := 0
	for i, kp := range all {
		if ok[i] {
			emitProc(ch, kp.job, kp.p)
			kept++
		}
	}
	return kept
}

// bounded returns the processes to export: all of them under the bound,
// else the biggest by GPU memory, then RSS.
func (s *procSource) bounded(st *State, n int) []jobProc {
	all := make([]jobProc, 0, n)
	for i := range st.Sample.Jobs {
		j := &st.Sample.Jobs[i]
		for k := range j.Processes {
			all = append(all, jobProc{j.Key, &j.Processes[k]})
		}
	}
	if len(all) <= s.max {
		return all
	}
	sort.SliceStable(all, func(a, b int) bool {
		ga, gb := i64(all[a].p.GPUBytes), i64(all[b].p.GPUBytes)
		if ga != gb {
			return ga > gb
		}
		return u64(all[a].p.RSSBytes) > u64(all[b].p.RSSBytes)
	})
	return all[:s.max]
}

func emitProc(ch chan<- prometheus.Metric, job string, p *jobs.Process) {
	pid := itoa(p.PID)
	for _, f := range []struct {
		d *prometheus.Desc
		v *uint64
	}{{procRSS, p.RSSBytes}, {procPSS, p.PSSBytes}, {procUSS, p.USSBytes}, {procSwap, p.SwapBytes}} {
		if f.v != nil {
			gauge(ch, f.d, float64(*f.v), job, pid, p.Role)
		}
	}
	if p.GPUBytes != nil {
		gauge(ch, procGPU, float64(*p.GPUBytes), job, pid, p.Role)
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func i64(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func u64(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}
