package metrics

import (
	"github.com/torchmem/torchmem/internal/sample"
	"github.com/torchmem/torchmem/internal/store"
)

// State is what one scrape exposes.
type State struct {
	// Sample is the latest sample; nil when the last Collect failed
	// (SampleErr says why) or none was taken yet.
	Sample    *sample.Sample
	SampleErr error
	// HostOOMKills is /proc/vmstat oom_kill: kernel OOM kills since boot,
	// nil when the kernel does not count them (before 4.13).
	HostOOMKills *uint64
	// Store is false when no history database is configured or found:
	// the store source then exports nothing, not even a failure.
	Store bool
	// Runs are the runs the store lists as running; RunsErr is the
	// store's error this time.
	Runs    []RunState
	RunsErr error
	// OOMWatched: serve follows the kernel log; OOMIncidents counts the
	// incidents seen by kind and verdict, OOMErr says why the log stopped.
	OOMWatched   bool
	OOMIncidents map[OOMKey]int64
	OOMErr       error
}

// RunState is a running `torchmem run` with its newest figures.
type RunState struct {
	Run store.Run
	// Latest is the newest stored sample; nil before the first.
	Latest *store.Sample
	// CUDAOOMs counts the run's cuda_oom events (from the hook's OOM
	// observer).
	CUDAOOMs int
	// Job is the id of the sampled job ("pid:1234") this run supervises,
	// "" when it is not among the sampled jobs.
	Job string
}
