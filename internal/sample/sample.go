// Package sample takes one timestamped Sample of everything torchmem
// watches: host memory and PSI, GPUs and their processes, PyTorch jobs with
// per-process RSS/PSS/USS/swap/GPU memory, and each job's cgroup.
//
// Sampling is tiered because the sources differ in cost by three orders of
// magnitude: /proc/<pid>/status costs ~20 µs, smaps_rollup ~2.5 ms for a
// torch process (the kernel walks every page table). The fast tier (status,
// cgroup usage and events, PSI, meminfo, GPU backend) runs on every Collect;
// the PSS tier (smaps_rollup, oom_score) runs for a process when its figures
// are older than Options.PSSPeriod, or its RSS moved by more than
// Options.PSSRSSChange since they were read; with Options.PSSTogether (the
// run supervisor) for every process at once every PSSPeriod instead. Every
// PSS figure carries its age.
//
// Exported API (stable: the supervisor of `torchmem run` and `torchmem serve`
// build on it):
//
//	New(opts Options) (*Sampler, error)
//	(*Sampler) Collect(ctx context.Context) (*Sample, error)
//	(*Sampler) RefreshPSS()                // next Collect re-reads every PSS
//	(*Sampler) Notices() []string
//	Sample, Host, GPU, Job, Tier           // JSON schema: docs/top.md
//	SchemaVersion
//
// A Sampler is used from one goroutine at a time.
package sample

import (
	"time"

	"github.com/torchmem/torchmem/internal/cgroup"
	"github.com/torchmem/torchmem/internal/gpu"
	"github.com/torchmem/torchmem/internal/identity"
	"github.com/torchmem/torchmem/internal/jobs"
	"github.com/torchmem/torchmem/internal/procfs"
)

// SchemaVersion is the version of Sample's JSON form; it changes only when
// a field is removed or changes meaning (new fields may appear).
const SchemaVersion = 1

// Sample is everything torchmem knows at one instant.
type Sample struct {
	Schema int       `json:"schema"`
	Time   time.Time `json:"time"`
	Host   Host      `json:"host"`
	GPU    GPU       `json:"gpu"`
	Jobs   []Job     `json:"jobs"`
	// Notices are standing one-line statements about missing features
	// ("no PSI on this kernel", "no NVIDIA GPU: …").
	Notices []string `json:"notices,omitempty"`
	Tier    Tier     `json:"tier"`
}

// Host is the machine-wide memory state.
type Host struct {
	Meminfo procfs.Meminfo `json:"meminfo"`
	// PSI is /proc/pressure/memory; nil when the kernel has none.
	PSI        *procfs.PSI `json:"psi,omitempty"`
	CgroupMode string      `json:"cgroup_mode"`
}

// GPU is what the GPU backend reported.
type GPU struct {
	Info      gpu.Info      `json:"info"`
	Devices   []gpu.Device  `json:"devices"`
	Processes []gpu.Process `json:"processes"`
	// Error is the backend's error this time ("" when it answered).
	Error string `json:"error,omitempty"`
}

// Job is a jobs.Job with the memory cgroup and workload identity of its
// root process.
type Job struct {
	jobs.Job
	// Key names the job across restarts of its processes: the pod, Slurm
	// step, container or systemd unit it runs in (identity.Identity.Key),
	// else "pid:<root pid>@<start ticks>"; unique within a Sample. Metrics
	// label job-level series with it.
	Key string `json:"key"`
	// Identity is whose job it is (Kubernetes, Slurm, container), nil when
	// the cgroup path and environment name nothing.
	Identity *identity.Identity `json:"identity,omitempty"`
	// Cgroup is nil when the cgroup could not be read (a notice says why).
	Cgroup *cgroup.Memory `json:"cgroup,omitempty"`
	// CgroupHeadroomBytes is max limit minus usage; nil without a limit.
	CgroupHeadroomBytes *uint64 `json:"cgroup_headroom_bytes,omitempty"`
}

// Tier says what this Collect did and what it cost.
type Tier struct {
	// FastSeconds is the wall time of the whole Collect minus the PSS tier.
	FastSeconds float64 `json:"fast_seconds"`
	// PSSRead is how many processes had smaps_rollup read this time.
	PSSRead    int     `json:"pss_read"`
	PSSSeconds float64 `json:"pss_seconds"`
	// PSSPeriodSeconds is the configured maximum PSS age.
	PSSPeriodSeconds float64 `json:"pss_period_seconds"`
}
