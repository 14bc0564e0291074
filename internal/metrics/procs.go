package metrics

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/torchmem/torchmem/internal/jobs"
	"github.com/torchmem/torchmem/internal/textwrap"
)

// procSource exports the PyTorch jobs found by the sampler: one info and
// totals per job, and per-process figures for at most max processes.
type procSource struct{ max int }

var (
	jobInfo = desc("job_info", "Always 1; names a PyTorch job: its command line (cut to 80 characters) and the torchmem run supervising it (\"\" when none).",
		"job_id", "command", "run")
	jobProcs    = desc("job_processes", "Processes of the job (main, DataLoader workers, children).", "job_id")
	jobRSS      = desc("job_rss_bytes", "Sum of the job's processes' VmRSS (/proc/<pid>/status); shared pages counted once per process.", "job_id")
	jobPSS      = desc("job_pss_bytes", "Sum of the job's processes' PSS (smaps_rollup): shared pages split among sharers.", "job_id")
	jobSwap     = desc("job_swap_bytes", "Sum of the job's processes' VmSwap (/proc/<pid>/status).", "job_id")
	jobGPU      = desc("job_gpu_memory_bytes", "GPU memory the job's processes hold on all GPUs, from the GPU backend.", "job_id")
	procRSS     = desc("process_rss_bytes", "VmRSS of a job's process (/proc/<pid>/status).", "job_id", "pid", "role")
	procPSS     = desc("process_pss_bytes", "PSS of a job's process (smaps_rollup, re-read every --pss-period or when its RSS moves a lot).", "job_id", "pid", "role")
	procUSS     = desc("process_uss_bytes", "USS (private clean + dirty) of a job's process (smaps_rollup).", "job_id", "pid", "role")
	procSwap    = desc("process_swap_bytes", "VmSwap of a job's process (/proc/<pid>/status).", "job_id", "pid", "role")
	procGPU     = desc("process_gpu_memory_bytes", "GPU memory a job's process holds on all GPUs, from the GPU backend.", "job_id", "pid", "role")
	procDropped = desc("process_series_dropped", "Job processes left out of the per-process series by the --max-processes bound (still in the job totals).")
)

func (procSource) name() string { return "processes" }

func (procSource) describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{jobInfo, jobProcs, jobRSS, jobPSS, jobSwap, jobGPU,
		procRSS, procPSS, procUSS, procSwap, procGPU, procDropped} {
		ch <- d
	}
}

func (s procSource) collect(st *State, ch chan<- prometheus.Metric) error {
	if st.Sample == nil {
		return st.SampleErr
	}
	runOf := map[string]string{}
	for _, r := range st.Runs {
		if r.Job != "" {
			runOf[r.Job] = r.Run.ID
		}
	}
	n := 0
	for _, j := range st.Sample.Jobs {
		t := j.Totals
		gauge(ch, jobInfo, 1, j.ID, textwrap.Cut(j.Command, 80), runOf[j.ID])
		gauge(ch, jobProcs, float64(t.Processes), j.ID)
		gauge(ch, jobRSS, float64(t.RSSBytes), j.ID)
		if t.PSSComplete {
			gauge(ch, jobPSS, float64(t.PSSBytes), j.ID)
		}
		gauge(ch, jobSwap, float64(t.SwapBytes), j.ID)
		if _, ok := t.Sources["gpu"]; ok {
			gauge(ch, jobGPU, float64(t.GPUBytes), j.ID)
		}
		n += len(j.Processes)
	}
	kept := s.bounded(st, n)
	for _, kp := range kept {
		emitProc(ch, kp.job, kp.p)
	}
	gauge(ch, procDropped, float64(n-len(kept)))
	return nil
}

type jobProc struct {
	job string
	p   *jobs.Process
}

// bounded returns the processes to export: all of them under the bound,
// else the biggest by GPU memory, then RSS.
func (s procSource) bounded(st *State, n int) []jobProc {
	all := make([]jobProc, 0, n)
	for i := range st.Sample.Jobs {
		j := &st.Sample.Jobs[i]
		for k := range j.Processes {
			all = append(all, jobProc{j.ID, &j.Processes[k]})
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
