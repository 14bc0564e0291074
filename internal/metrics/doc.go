// Package metrics exposes torchmem's view of a node in the Prometheus text
// format, with prometheus/client_golang: per GPU, per process of each
// PyTorch job, per job (cgroup and PyTorch allocator), and host memory.
//
// The collectors never read the host themselves: they format the latest
// State (a sample.Sample taken by the serve loop, and the running runs of
// the history store), so a scrape costs microseconds whatever the sources
// cost, and scrapes never pile work onto the machine.
//
// One collector per source (host, gpu, processes, cgroup, store), listed
// in one place (sources in registry.go). A source that failed this time
// exports nothing but torchmem_scrape_success{source="…"} 0; the others
// are unaffected.
//
// Label cardinality (bounded; docs/serve.md has the full list):
//
//   - gpu, UUID: one value per GPU (UUID as dcgm-exporter spells it).
//   - job_id: the job's stable key (sample.Job.Key: pod UID, Slurm
//     job.step, container, unit, else root pid@start), one per running
//     PyTorch job; a worker restart does not change it (not "job":
//     Prometheus keeps that for the scrape job). namespace, pod,
//     container and slurm_job_id are functions of it.
//   - role: main, worker, child: the per-role totals (procs.go).
//   - pid: only with Options.ProcessSeries, at most Options.MaxProcesses
//     at once and Options.MaxProcessSeries label sets created per
//     window (series.go), the rest counted in
//     torchmem_process_series_dropped.
//   - run: the id of a running `torchmem run`, one per running run.
//   - command (info metrics only): cut to 80 characters.
//
// API:
//
//	NewRegistry(state func() *State, opts Options) *prometheus.Registry
//	State, RunState
package metrics
