package store

import (
	"encoding/json"
	"time"
)

// Status is the outcome of a run.
type Status string

// Run statuses.
const (
	StatusRunning        Status = "running"
	StatusExited         Status = "exited"          // exited by itself; see ExitCode
	StatusKilled         Status = "killed"          // died of a signal; see Signal
	StatusOOMKilled      Status = "oom-killed"      // the kernel OOM killer killed it
	StatusStopped        Status = "stopped"         // a torchmem policy rule stopped it; see Signal or ExitCode
	StatusSupervisorLost Status = "supervisor lost" // torchmem died while the job ran
)

// Run is one supervised job. Times are UTC on the way out.
type Run struct {
	ID      string     `json:"id"` // short, human-typable ("k3m9tq")
	Command []string   `json:"command"`
	Cwd     string     `json:"cwd"`
	Host    string     `json:"host,omitempty"`
	User    string     `json:"user,omitempty"`
	Start   time.Time  `json:"start"`
	End     *time.Time `json:"end,omitempty"`
	Status  Status     `json:"status"`
	// ExitCode is the job's exit status when it exited; Signal the signal
	// number that killed it. Both nil while running or when lost.
	ExitCode *int `json:"exit_code,omitempty"`
	Signal   *int `json:"signal,omitempty"`
	// Labels: Slurm/torchrun ids (SLURM_JOB_ID, TORCHELASTIC_RUN_ID, ...) and user labels.
	Labels map[string]string `json:"labels,omitempty"`
	// Limits as the supervisor applied them (memory_max, gpu_threshold, ...): free-form JSON.
	Limits json.RawMessage `json:"limits,omitempty"`
	// Peaks by PeakKey, bytes, e.g. "cgroup_usage", "pss_total",
	// "gpu0_used", "alloc_peak_allocated".
	Peaks Peaks `json:"peaks,omitempty"`
	// Summary is the post-mortem (free-form JSON written by the supervisor).
	Summary json.RawMessage `json:"summary,omitempty"`
	// Supervisor identity, used to detect a dead supervisor.
	SupervisorPID   int    `json:"supervisor_pid,omitempty"`
	SupervisorStart uint64 `json:"supervisor_start,omitempty"` // /proc/PID/stat starttime (clock ticks since boot)
	BootID          string `json:"boot_id,omitempty"`
	// Samples is the number of stored sample rows (after downsampling); filled by Run and Runs.
	Samples int64 `json:"samples"`
	// LastSample is the time of the newest stored sample, nil when none.
	LastSample *time.Time `json:"last_sample,omitempty"`
}

// Sample is one tick of the supervisor's sampler. Every series is optional:
// nil means "not measured this tick" (no GPU, PSS tier not due, process not
// hooked), never zero. Bytes unless the name says otherwise.
type Sample struct {
	Time           time.Time `json:"t"`
	CgroupUsage    *int64    `json:"cgroup_usage,omitempty"`    // memory.current / memory.usage_in_bytes
	HostAvailable  *int64    `json:"host_available,omitempty"`  // MemAvailable
	PSSTotal       *int64    `json:"pss_total,omitempty"`       // sum of the job's PSS (smaps_rollup)
	RSSTotal       *int64    `json:"rss_total,omitempty"`       // sum of the job's RSS (status)
	SwapTotal      *int64    `json:"swap_total,omitempty"`      // job swap (cgroup or status)
	AllocAllocated *int64    `json:"alloc_allocated,omitempty"` // allocator allocated, summed over hooked processes
	AllocReserved  *int64    `json:"alloc_reserved,omitempty"`  // allocator reserved, summed
	Step           *int64    `json:"step,omitempty"`            // latest optimizer step (max over ranks)
	// GPUUsed is used memory per device index as NVML reports it (the whole
	// device); GPUJobUsed is what the job's processes hold on it. Nil entries
	// are devices without a reading.
	GPUUsed    []*int64 `json:"gpu_used,omitempty"`
	GPUJobUsed []*int64 `json:"gpu_job_used,omitempty"`
	// Extra holds any other series by name: ExtraAllocRetries and
	// ExtraAllocOOMs, the only ones written.
	Extra map[string]float64 `json:"extra,omitempty"`
	// Resolution is how many milliseconds this row summarises: 0 for a raw
	// sample, the bucket width for downsampled rows (values are bucket maxima).
	Resolution int64 `json:"res_ms,omitempty"`
}

// Sample.Extra keys written by the run supervisor and read by the node
// agent: allocator counters summed over the job's hooked processes, from
// torch.cuda.memory_stats() (num_alloc_retries: cudaMalloc retried after the
// cache was freed; num_ooms: allocations that raised out of memory).
const (
	ExtraAllocRetries = "alloc_retries"
	ExtraAllocOOMs    = "alloc_ooms"
)

// Event is something that happened during a run: a cgroup event, a policy
// action, a hook OOM or exception, a worker death, a notice.
type Event struct {
	Time    time.Time       `json:"t"`
	Kind    string          `json:"kind"`   // "oom_kill", "cleanup", "cuda_oom", "exception", "warn", ...
	Source  string          `json:"source"` // "cgroup", "policy", "hook", "kmsg", "supervisor"
	PID     int             `json:"pid,omitempty"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Step is one optimizer step (or the last of several, see Steps) of one
// hooked process, from the hook's step messages.
type Step struct {
	Time        time.Time `json:"t"`
	Step        int64     `json:"step"`
	PID         int       `json:"pid"`
	Rank        *int      `json:"rank,omitempty"`
	Steps       int64     `json:"steps,omitempty"`        // steps this row covers (rate-limited hook)
	StepSeconds *float64  `json:"step_seconds,omitempty"` // mean step time
	Allocated   *int64    `json:"allocated,omitempty"`    // allocator, summed over the process's devices
	Reserved    *int64    `json:"reserved,omitempty"`
	// PeakAllocated and PeakReserved are the allocator's high-water marks
	// as the step message carried them (since the process started, or
	// since the last reset: with step peaks on, the step's end).
	PeakAllocated *int64 `json:"peak_allocated,omitempty"`
	PeakReserved  *int64 `json:"peak_reserved,omitempty"`
	// StepPeakAllocated and StepPeakReserved are the measured peaks of the
	// steps this row covers (max_memory_allocated/reserved read and reset
	// by the hook at each step), summed over the process's devices; nil
	// without CUDA or with step peaks off.
	StepPeakAllocated *int64 `json:"step_peak_allocated,omitempty"`
	StepPeakReserved  *int64 `json:"step_peak_reserved,omitempty"`
}

// Finish is what FinishRun records at the end of a run.
type Finish struct {
	End      time.Time
	Status   Status
	ExitCode *int
	Signal   *int
	Peaks    Peaks // merged into the stored peaks (max per key)
	Summary  json.RawMessage
}

// RunFilter selects runs for Runs; zero values mean "any".
type RunFilter struct {
	Status Status
	Since  time.Time
	Until  time.Time
	Label  map[string]string // all must match
	// Command matches runs whose command line contains this substring.
	Command string
	Limit   int // default 100; newest first
}

// Int returns a pointer to n, for Sample's optional series.
func Int(n int64) *int64 { return &n }
