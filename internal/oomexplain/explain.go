package oomexplain

// Verdict identifies the explanation's conclusion. Values are part of the
// JSON schema.
type Verdict string

// Verdicts.
const (
	VerdictCgroupLimit     Verdict = "cgroup_limit"         // a memory cgroup's limit was hit
	VerdictHostExhausted   Verdict = "host_exhausted"       // the whole host ran out of RAM (+swap)
	VerdictCpusetExhausted Verdict = "cpuset_exhausted"     // the allowed NUMA nodes ran out
	VerdictFragmentation   Verdict = "fragmentation"        // reserved-but-unallocated would have fit the request
	VerdictOtherProcesses  Verdict = "other_processes"      // other processes held the GPU memory needed
	VerdictMemoryFraction  Verdict = "memory_fraction"      // a per-process fraction limit was hit
	VerdictDoesNotFit      Verdict = "does_not_fit"         // the job itself needs more than the GPU has
	VerdictRequestTooLarge Verdict = "request_too_large"    // one request exceeds the whole GPU
	VerdictGPUOOM          Verdict = "gpu_oom"              // out of GPU memory, numbers unknown
	VerdictSharedMemory    Verdict = "shm_too_small"        // /dev/shm too small for DataLoader workers
	VerdictFDLimit         Verdict = "fd_limit"             // RLIMIT_NOFILE too low for fd sharing
	VerdictKilledByKernel  Verdict = "killed_by_kernel_oom" // a worker/child was the kernel OOM victim
	VerdictKilledSIGKILL   Verdict = "killed_sigkill"       // SIGKILL of unknown origin (often OOM)
	VerdictSlurmLimit      Verdict = "slurm_memory_limit"   // the Slurm job's cgroup limit
	VerdictSystemdOOMD     Verdict = "systemd_oomd"         // userspace OOM killer on pressure/swap
	VerdictWorkerExited    Verdict = "worker_exited"        // a worker exited with an error code (not a kill)
	VerdictIncomplete      Verdict = "incomplete_report"    // too little of the kernel report to tell
)

// Explanation is the verdict on one incident with the arithmetic behind it
// and what to do about it.
type Explanation struct {
	Verdict Verdict `json:"verdict"`
	// Summary is one sentence for people.
	Summary string `json:"summary"`
	// Arithmetic shows the computation, one step per entry, sizes printed
	// the way PyTorch prints them.
	Arithmetic []string `json:"arithmetic,omitempty"`
	// Recommendations are concrete actions, most useful first.
	Recommendations []string `json:"recommendations,omitempty"`
}

// Context is what the caller knows beyond the log: `torchmem run` passes
// its job's pids, cgroup, allocator stats from the hook, GPU processes
// from NVML; `torchmem oom` passes the host's /dev/shm size and fd limit.
// Zero values mean unknown.
type Context struct {
	// JobPIDs are the supervised job's processes (incl. DataLoader workers).
	JobPIDs []int
	// CgroupPath (as the kernel prints it, e.g. "/torchmem/run-42") and
	// CgroupLimitBytes of the job's memory cgroup.
	CgroupPath       string
	CgroupLimitBytes int64
	// MemoryStats are torch.cuda.memory_stats() entries from the hook
	// ("allocated_bytes.all.current", "reserved_bytes.all.peak", ...).
	MemoryStats map[string]int64
	// GPUProcesses are the processes NVML saw on the GPU (with names).
	GPUProcesses []GPUProcess
	// ShmSizeBytes is the size of /dev/shm; NoFileLimit the soft
	// RLIMIT_NOFILE (of the job, or of the host reading the log).
	ShmSizeBytes int64
	NoFileLimit  uint64
	// HostRAMBytes is MemTotal, for sizing advice.
	HostRAMBytes int64
}

// ExplainAll correlates incs and sets each one's Explanation.
func ExplainAll(incs []Incident, ctx Context) {
	Correlate(incs)
	for i := range incs {
		e := explainWith(incs, i, ctx)
		incs[i].Explanation = &e
	}
}

// Explain returns the verdict on one incident on its own (without the
// incidents it may be correlated with; ExplainAll uses those too).
func Explain(inc *Incident, ctx Context) Explanation {
	one := []Incident{*inc}
	one[0].Related = nil
	return explainWith(one, 0, ctx)
}
