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
//   - gpu: the device index, one value per GPU.
//   - job_id: the root PID of a job ("pid:1234"), one per running PyTorch
//     job (not "job": Prometheus keeps that for the scrape job).
//   - pid, role: one per process of a job, at most Options.MaxProcesses
//     processes (default 256; the biggest by GPU then RSS win), the rest
//     counted in torchmem_process_series_dropped.
//   - run: the id of a running `torchmem run`, one per running run.
//   - command (info metrics only): cut to 80 characters.
//
// API:
//
//	NewRegistry(state func() *State, opts Options) *prometheus.Registry
//	State, RunState
package metrics
