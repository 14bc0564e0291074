package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/torchmem/torchmem/internal/sample"
	"github.com/torchmem/torchmem/internal/store"
)

// storeSource exports the PyTorch allocator figures of running `torchmem
// run` jobs: the hook reports them to the supervisor, which stores them;
// this reads the newest stored sample of each running run.
type storeSource struct{}

var (
	allocAllocated = desc("job_allocator_allocated_bytes", "PyTorch caching allocator: bytes in live tensors, summed over the run's hooked processes (torch.cuda.memory_stats).", runLabelNames...)
	allocReserved  = desc("job_allocator_reserved_bytes", "PyTorch caching allocator: bytes reserved from the driver (allocated + cached), summed over hooked processes.", runLabelNames...)
	allocPeak      = desc("job_allocator_peak_allocated_bytes", "Highest allocator allocated bytes of any hooked process of the run so far.", runLabelNames...)
	allocPeakRes   = desc("job_allocator_peak_reserved_bytes", "Highest allocator reserved bytes of any hooked process of the run so far.", runLabelNames...)
	allocRetries   = desc("job_allocator_alloc_retries_total", "cudaMalloc retries after the allocator freed its cache (num_alloc_retries): a job close to the GPU's memory.", runLabelNames...)
	allocOOMs      = desc("job_allocator_ooms_total", "CUDA out-of-memory errors the run's hooked processes hit (allocator OOM observer).", runLabelNames...)
	allocStep      = desc("job_step", "Latest optimizer step of the run (highest over ranks).", runLabelNames...)
	runLast        = desc("job_run_last_sample_timestamp_seconds", "Unix time of the newest sample the run's supervisor stored.", runLabelNames...)
)

func (storeSource) name() string { return "store" }

func (storeSource) describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{allocAllocated, allocReserved, allocPeak, allocPeakRes, allocRetries, allocOOMs, allocStep, runLast} {
		ch <- d
	}
}

func (storeSource) collect(st *State, ch chan<- prometheus.Metric) error {
	if !st.Store {
		return errAbsent
	}
	if st.RunsErr != nil {
		return st.RunsErr
	}
	byID := jobsByID(st.Sample)
	for _, r := range st.Runs {
		l := runLabels(r, byID)
		counter(ch, allocOOMs, float64(r.CUDAOOMs), l...)
		if v, ok := r.Run.Peaks.Get(store.PeakAllocPeakAllocated); ok {
			gauge(ch, allocPeak, float64(v), l...)
		}
		if v, ok := r.Run.Peaks.Get(store.PeakAllocPeakReserved); ok {
			gauge(ch, allocPeakRes, float64(v), l...)
		}
		s := r.Latest
		if s == nil {
			continue
		}
		gauge(ch, runLast, float64(s.Time.UnixNano())/1e9, l...)
		if s.AllocAllocated != nil {
			gauge(ch, allocAllocated, float64(*s.AllocAllocated), l...)
		}
		if s.AllocReserved != nil {
			gauge(ch, allocReserved, float64(*s.AllocReserved), l...)
		}
		if s.Step != nil && *s.Step >= 0 {
			gauge(ch, allocStep, float64(*s.Step), l...)
		}
		if v, ok := s.Extra[store.ExtraAllocRetries]; ok {
			counter(ch, allocRetries, v, l...)
		}
	}
	return nil
}

// runLabelNames label a run's series: the run, then the job labels of the
// sampled job it supervises (all "" when it is not among them).
var runLabelNames = append([]string{"run"}, jobLabelNames...)

func runLabels(r RunState, byID map[string]*sample.Job) []string {
	if j := byID[r.Job]; j != nil {
		return append([]string{r.Run.ID}, jobLabels(j)...)
	}
	return []string{r.Run.ID, "", "", "", "", ""}
}

// MatchRuns sets each run's Job to the sampled job it supervises: the job
// whose root process descends from the run's supervisor. parent returns a
// process's parent PID (0 when unknown); the walk up from each job root
// stops after 16 steps, so a job under a wrapper (a shell, torchrun) is
// found too.
func MatchRuns(smp *sample.Sample, runs []RunState, parent func(pid int) int) {
	if smp == nil || len(runs) == 0 {
		return
	}
	sup := make(map[int]int, len(runs)) // supervisor pid -> index in runs
	for i, r := range runs {
		if r.Run.SupervisorPID > 0 {
			sup[r.Run.SupervisorPID] = i
		}
	}
	for _, j := range smp.Jobs {
		pid := j.RootPID
		if len(j.Processes) > 0 && j.Processes[0].PID == pid {
			pid = j.Processes[0].PPid // known already: spare one read
		} else if parent != nil {
			pid = parent(pid)
		}
		for depth := 0; pid > 0 && depth < 16; depth++ { // pid 1 may be the supervisor (a container)
			if i, ok := sup[pid]; ok {
				if runs[i].Job == "" {
					runs[i].Job = j.ID
				}
				break
			}
			if parent == nil {
				break
			}
			pid = parent(pid)
		}
	}
}
