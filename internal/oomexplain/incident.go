package oomexplain

import "time"

// Kind names what happened.
type Kind string

// Incident kinds. The string values are part of the JSON schema.
const (
	KindKernelOOM        Kind = "kernel_oom_kill"       // the kernel's OOM killer killed a process
	KindCUDAOOM          Kind = "cuda_oom"              // PyTorch caching allocator "CUDA out of memory"
	KindCUDAMallocAsync  Kind = "cuda_malloc_async_oom" // cudaMallocAsync backend table
	KindCUDAError        Kind = "cuda_error_oom"        // "CUDA error: out of memory" (driver/runtime)
	KindCUBLASAlloc      Kind = "cublas_alloc_failed"   // CUBLAS_STATUS_ALLOC_FAILED
	KindNCCLOOM          Kind = "nccl_cuda_oom"         // NCCL "Cuda failure 'out of memory'"
	KindDataLoaderKilled Kind = "dataloader_worker_killed"
	KindDataLoaderExited Kind = "dataloader_worker_exited"
	KindSharedMemory     Kind = "shared_memory"         // bus error / shm full / cannot open shm object
	KindTooManyOpenFiles Kind = "too_many_open_files"   // fd limit hit sharing tensors
	KindTorchrunSIGKILL  Kind = "torchrun_child_killed" // ChildFailedError exitcode -9 / SIGKILL
	KindSlurmOOM         Kind = "slurm_oom_kill"        // slurmstepd "oom-kill event(s)"
	KindSystemdOOMD      Kind = "systemd_oomd_kill"     // systemd-oomd killed a cgroup
	KindShellKilled      Kind = "shell_killed"          // the shell reports a job killed by SIGKILL ("Killed")
	KindContainerKilled  Kind = "container_killed"      // a container runtime's status: OOMKilled or exit code 137
)

// Incident is one out-of-memory event found in a log. Exactly one of
// Kernel, CUDA, Host is set, according to Kind.
type Incident struct {
	Kind Kind `json:"kind"`
	// Time is the wall-clock time when the log says it; absent otherwise.
	Time *time.Time `json:"time,omitempty"`
	// TimeYearAssumed: the log's stamp has no year ("May  6 10:02:51", BSD
	// syslog and journalctl's short format): Time's year was assumed.
	TimeYearAssumed bool `json:"time_year_assumed,omitempty"`
	// UptimeSeconds is the kernel timestamp (seconds since boot) when given.
	UptimeSeconds *float64 `json:"uptime_seconds,omitempty"`
	// Source is the file name ("-" for stdin, "/dev/kmsg", "journalctl -k").
	Source string `json:"source,omitempty"`
	// Line is the 1-based line of Source where the incident starts.
	Line int `json:"line,omitempty"`
	// Host is the machine name from a syslog/journal header or torchrun.
	Host string `json:"host,omitempty"`
	// Rank is the distributed rank from a "[rankN]:" prefix or torchrun.
	Rank *int `json:"rank,omitempty"`
	// Ranks lists the distinct ranks of incidents folded into this one by
	// Group when they differ (the same CUDA OOM from 8 ranks).
	Ranks []int `json:"ranks,omitempty"`
	// PIDs are the processes the incident is about (victim, worker, child).
	PIDs []int `json:"pids,omitempty"`
	// Count is how many times the same message was seen (chained
	// tracebacks repeat it); 1 for most incidents.
	Count int `json:"count"`

	Kernel  *KernelOOM   `json:"kernel,omitempty"`
	CUDA    *CUDAOOM     `json:"cuda,omitempty"`
	Failure *HostFailure `json:"host_failure,omitempty"`

	// Raw holds the first lines of the incident as logged (bounded);
	// RawDropped counts the lines left out.
	Raw        []string `json:"raw"`
	RawDropped int      `json:"raw_dropped,omitempty"`
	// Truncated: the log ended or was cut before the incident was complete.
	Truncated bool `json:"truncated,omitempty"`
	// Related are indexes (in the same result slice) of incidents that tell
	// the same story, set by Correlate.
	Related []int `json:"related,omitempty"`
	// Explanation is filled by Explain/ExplainAll.
	Explanation *Explanation `json:"explanation,omitempty"`
}

// KernelOOM is one kernel OOM-killer report (mm/oom_kill.c dump_header,
// mm/memcontrol.c mem_cgroup_print_oom_*), from the trigger line to the
// "Killed process" line and the oom_reaper's follow-up.
type KernelOOM struct {
	// Trigger: "<comm> invoked oom-killer: gfp_mask=..., order=N, oom_score_adj=N".
	Trigger *Trigger `json:"trigger,omitempty"`
	// Constraint: CONSTRAINT_NONE (whole host), CONSTRAINT_MEMCG (a memory
	// cgroup limit), CONSTRAINT_CPUSET, CONSTRAINT_MEMORY_POLICY; inferred
	// as CONSTRAINT_MEMCG from "Memory cgroup out of memory" on kernels
	// that do not print it (< 4.19).
	Constraint string `json:"constraint,omitempty"`
	// ConstraintInferred names the evidence when Constraint was not
	// printed ("oom-kill:constraint=") but inferred: "Memory cgroup out of
	// memory", "Task in ... limit of /b", "call trace: try_charge".
	ConstraintInferred string `json:"constraint_inferred,omitempty"`
	// TraceMemcg: the call trace shows a memory cgroup charge
	// (try_charge, mem_cgroup_out_of_memory, ...).
	TraceMemcg bool `json:"trace_memcg,omitempty"`
	// GlobalWording: a selection or kill line has the global wording ("Out
	// of memory: Kill(ed) process"), not the memory cgroup's.
	GlobalWording bool `json:"global_wording,omitempty"`
	// MemInfoPrinted: the report printed "Mem-Info:" (a memcg OOM prints
	// the cgroup's counters instead), whatever of its figures the log kept.
	MemInfoPrinted bool `json:"mem_info_printed,omitempty"`
	// TracePageAlloc: the call trace runs through the page allocator's OOM
	// path (__alloc_pages_may_oom, __alloc_pages_slowpath).
	TracePageAlloc bool `json:"trace_page_alloc,omitempty"`
	// TracePageFault: the call trace runs through the page-fault handler
	// (handle_mm_fault): a user fault's order-0 allocation does not fail
	// with a warning, it invokes the OOM killer (or the report's trace
	// tail just before its Mem-Info shows it).
	TracePageFault bool `json:"trace_page_fault,omitempty"`
	// LimitOfHost: "Task in /x killed as a result of limit of host"
	// (Alibaba Cloud Linux and other vendor kernels): the whole host (or
	// its allowed NUMA nodes) ran out; no memory cgroup limit was hit.
	LimitOfHost bool   `json:"limit_of_host,omitempty"`
	Nodemask    string `json:"nodemask,omitempty"`
	Cpuset      string `json:"cpuset,omitempty"`
	MemsAllowed string `json:"mems_allowed,omitempty"`
	// OOMMemcg is the cgroup whose limit was hit; TaskMemcg the victim's.
	OOMMemcg  string `json:"oom_memcg,omitempty"`
	TaskMemcg string `json:"task_memcg,omitempty"`
	// OOMMemcgTruncated: the line holding OOMMemcg was evidently cut (the
	// keys the kernel prints after it are missing): the name may be a
	// prefix of the real one.
	OOMMemcgTruncated bool `json:"oom_memcg_truncated,omitempty"`
	// Memcg: "memory: usage 102400kB, limit 102400kB, failcnt 1473" and the
	// swap / memory+swap / kmem lines.
	Memcg *MemcgCounters `json:"memcg,omitempty"`
	Swap  *MemcgCounters `json:"memcg_swap,omitempty"`
	Memsw *MemcgCounters `json:"memcg_memsw,omitempty"`
	Kmem  *MemcgCounters `json:"memcg_kmem,omitempty"`
	// MemcgStats are selected "Memory cgroup stats for /x:" counters in
	// bytes (anon/rss, file/cache, shmem, swap ...).
	MemcgStatsPath string           `json:"memcg_stats_path,omitempty"`
	MemcgStats     map[string]int64 `json:"memcg_stats,omitempty"`
	// MemInfo is the global "Mem-Info:" summary (whole-host OOMs).
	MemInfo *MemInfo `json:"mem_info,omitempty"`
	// Nodes are the per-NUMA-node lines of Mem-Info ("Node 0 Normal
	// free:..kB min:..kB ...", "Node 0 active_anon:..kB ..."), in order.
	Nodes []NodeMem `json:"nodes,omitempty"`
	// Tasks are the biggest rows of the task table by RSS (at most
	// Options.MaxTasks); TasksTotal counts all rows.
	Tasks      []Task `json:"tasks,omitempty"`
	TasksTotal int    `json:"tasks_total,omitempty"`
	// PageSize is what task-table page counts were multiplied by.
	PageSize int64 `json:"page_size,omitempty"`
	// Selected: 3.x/4.x "Kill process N (comm) score S or sacrifice child".
	Selected *Selected `json:"selected,omitempty"`
	// Victim: "Killed process N (comm) total-vm:..kB, anon-rss:..kB, ...".
	Victim *Victim `json:"victim,omitempty"`
	// Reaped: "oom_reaper: reaped process N (comm), now anon-rss:0kB, ...".
	Reaped *Reaped `json:"reaped,omitempty"`
	// NoKillable: "Out of memory and no killable processes..." (panic path).
	NoKillable bool `json:"no_killable_processes,omitempty"`
}

// Trigger is the task whose allocation invoked the OOM killer.
type Trigger struct {
	Comm        string `json:"comm"`
	PID         *int   `json:"pid,omitempty"` // from "CPU: n PID: n Comm:" line
	GFPMask     string `json:"gfp_mask,omitempty"`
	Order       *int   `json:"order,omitempty"`
	OOMScoreAdj *int   `json:"oom_score_adj,omitempty"`
}

// MemcgCounters is one "usage NkB, limit NkB, failcnt N" line in bytes.
// A limit the kernel prints as 9007199254740988kB (no limit) is Unlimited.
type MemcgCounters struct {
	UsageBytes int64 `json:"usage_bytes"`
	LimitBytes int64 `json:"limit_bytes"`
	Unlimited  bool  `json:"unlimited,omitempty"`
	Failcnt    int64 `json:"failcnt"`
}

// MemInfo is the whole-host memory picture the kernel prints (show_mem),
// in bytes.
type MemInfo struct {
	TotalRAMBytes  *int64 `json:"total_ram_bytes,omitempty"`  // "N pages RAM"
	FreeBytes      *int64 `json:"free_bytes,omitempty"`       // "free:N" pages
	AnonBytes      *int64 `json:"anon_bytes,omitempty"`       // active_anon + inactive_anon
	FileBytes      *int64 `json:"file_bytes,omitempty"`       // active_file + inactive_file
	ShmemBytes     *int64 `json:"shmem_bytes,omitempty"`      // "shmem:N"
	SlabBytes      *int64 `json:"slab_bytes,omitempty"`       // slab_reclaimable + slab_unreclaimable
	SwapTotalBytes *int64 `json:"swap_total_bytes,omitempty"` // "Total swap = NkB"
	SwapFreeBytes  *int64 `json:"swap_free_bytes,omitempty"`  // "Free swap  = NkB"
	HugePagesBytes *int64 `json:"hugepages_bytes,omitempty"`  // hugepages_total * size
}

// NodeMem is one NUMA node's memory as show_mem prints it, in bytes. The
// page allocator fails in a zone whose free memory is below its min
// watermark: one node can be there while others have room (a cpuset or
// mempolicy binds the task to it). Free/Min/Low/High/Present/Managed sum
// the node's zones; each is absent when no zone line gave it.
type NodeMem struct {
	Node int `json:"node"`
	Watermarks
	AnonBytes  *int64    `json:"anon_bytes,omitempty"`  // "Node N active_anon:" + inactive_anon
	FileBytes  *int64    `json:"file_bytes,omitempty"`  // active_file + inactive_file
	ShmemBytes *int64    `json:"shmem_bytes,omitempty"` // "shmem:"
	Zones      []ZoneMem `json:"zones,omitempty"`
}

// Watermarks are a zone's (or a node's summed) free memory against its
// min/low/high watermarks, with its present and managed sizes, in bytes.
type Watermarks struct {
	FreeBytes    *int64 `json:"free_bytes,omitempty"`
	MinBytes     *int64 `json:"min_bytes,omitempty"`
	LowBytes     *int64 `json:"low_bytes,omitempty"`
	HighBytes    *int64 `json:"high_bytes,omitempty"`
	PresentBytes *int64 `json:"present_bytes,omitempty"`
	ManagedBytes *int64 `json:"managed_bytes,omitempty"`
}

// ZoneMem is one zone line: "Node 0 Normal free:65140kB min:65180kB
// low:128456kB high:191732kB ... present:64487424kB managed:63287848kB".
type ZoneMem struct {
	Zone string `json:"zone"`
	Watermarks
}

// BelowMin reports a zone whose free memory was under its min watermark.
func (z ZoneMem) BelowMin() bool {
	return z.FreeBytes != nil && z.MinBytes != nil && *z.FreeBytes < *z.MinBytes
}

// Task is one row of the kernel's task table ("Tasks state (memory values
// in pages)"), converted to bytes.
type Task struct {
	PID           int    `json:"pid"`
	UID           int    `json:"uid"`
	TGID          int    `json:"tgid"`
	TotalVMBytes  int64  `json:"total_vm_bytes"`
	RSSBytes      int64  `json:"rss_bytes"`
	RSSAnonBytes  *int64 `json:"rss_anon_bytes,omitempty"` // kernel >= 6.x columns
	RSSFileBytes  *int64 `json:"rss_file_bytes,omitempty"`
	RSSShmemBytes *int64 `json:"rss_shmem_bytes,omitempty"`
	SwapBytes     int64  `json:"swap_bytes"`
	OOMScoreAdj   int    `json:"oom_score_adj"`
	Name          string `json:"name"`
}

// Selected is the older kernels' choice line, before the kill.
type Selected struct {
	PID   int    `json:"pid"`
	Comm  string `json:"comm"`
	Score *int   `json:"score,omitempty"`
}

// Victim is the process the kernel killed.
type Victim struct {
	PID           int    `json:"pid"`
	Comm          string `json:"comm"`
	UID           *int   `json:"uid,omitempty"`
	TotalVMBytes  *int64 `json:"total_vm_bytes,omitempty"`
	AnonRSSBytes  *int64 `json:"anon_rss_bytes,omitempty"`
	FileRSSBytes  *int64 `json:"file_rss_bytes,omitempty"`
	ShmemRSSBytes *int64 `json:"shmem_rss_bytes,omitempty"`
	PgTablesBytes *int64 `json:"pgtables_bytes,omitempty"`
	OOMScoreAdj   *int   `json:"oom_score_adj,omitempty"`
}

// Reaped is the oom_reaper's report after it freed the victim's memory.
type Reaped struct {
	PID           int    `json:"pid"`
	Comm          string `json:"comm"`
	AnonRSSBytes  *int64 `json:"anon_rss_bytes,omitempty"`
	FileRSSBytes  *int64 `json:"file_rss_bytes,omitempty"`
	ShmemRSSBytes *int64 `json:"shmem_rss_bytes,omitempty"`
}

// CUDAOOM is a GPU allocation failure reported by PyTorch (or CUDA, cuBLAS,
// NCCL underneath it). Sizes are bytes parsed from PyTorch's format_size
// ("1.40 GiB"), so they are exact to about 0.5% of the printed unit.
type CUDAOOM struct {
	// Format: "pre-2.1" "(GPU 0; X total capacity; ...)", "2.1"
	// ("total capacty" typo), "2.2+" ("total capacity of X of which Y is
	// free"), "cudaMallocAsync", "cuda-error", "cublas", "nccl".
	Format string `json:"format"`
	// Exception is the class name when the log shows it
	// ("torch.OutOfMemoryError", "torch.cuda.OutOfMemoryError", "RuntimeError").
	Exception string `json:"exception,omitempty"`
	Device    *int   `json:"device,omitempty"`
	// RequestedBytes: "Tried to allocate X".
	RequestedBytes *int64 `json:"requested_bytes,omitempty"`
	// TotalBytes: the GPU's capacity; FreeBytes: free on the device
	// (cudaMemGetInfo) at the failure.
	TotalBytes *int64 `json:"total_bytes,omitempty"`
	FreeBytes  *int64 `json:"free_bytes,omitempty"`
	// AllowedBytes: the per-process limit set by set_per_process_memory_fraction.
	AllowedBytes *int64 `json:"allowed_bytes,omitempty"`
	// PID is this process's pid when the message lists it (2.1's process
	// list includes the failing process itself).
	PID *int `json:"pid,omitempty"`
	// ProcessBytes: "this process has X memory in use" (incl. CUDA context).
	ProcessBytes *int64 `json:"process_bytes,omitempty"`
	// AllocatedBytes: held by tensors; ReservedBytes: cached by PyTorch in
	// total; ReservedUnallocatedBytes = Reserved - Allocated.
	AllocatedBytes           *int64 `json:"allocated_bytes,omitempty"`
	ReservedBytes            *int64 `json:"reserved_bytes,omitempty"`
	ReservedUnallocatedBytes *int64 `json:"reserved_unallocated_bytes,omitempty"`
	// PrivatePoolBytes: "with X allocated in private pools (e.g., CUDA Graphs)".
	PrivatePoolBytes *int64 `json:"private_pool_bytes,omitempty"`
	// OtherProcesses: "Process N has X memory in use." (2.1+; the list may
	// include this process itself when PyTorch cannot tell).
	OtherProcesses []GPUProcess `json:"processes,omitempty"`
	// Message is the error text as parsed (bounded).
	Message string `json:"message"`
}

// GPUProcess is a process holding GPU memory.
type GPUProcess struct {
	PID   int    `json:"pid"`
	Bytes int64  `json:"bytes"`
	Name  string `json:"name,omitempty"`
}

// PlatformWindows is HostFailure.Platform for a log written on Windows.
const PlatformWindows = "windows"

// HostFailure is a training failure caused by host memory, shared memory
// or file-descriptor limits, or a kill by something other than the kernel.
type HostFailure struct {
	// Signal is the name ("Killed", "Bus error", "SIGKILL"); SignalNumber
	// its number when known.
	Signal       string `json:"signal,omitempty"`
	SignalNumber *int   `json:"signal_number,omitempty"`
	ExitCode     *int   `json:"exit_code,omitempty"`
	// LocalRank and Program come from torchrun's failure table.
	LocalRank *int   `json:"local_rank,omitempty"`
	Program   string `json:"program,omitempty"`
	// ShmObject: the shared-memory object name ("/torch_123_456_0").
	ShmObject string `json:"shm_object,omitempty"`
	// Errno text from the message ("Too many open files", "No space left on device").
	Errno string `json:"errno,omitempty"`
	// Slurm: job/step and event count; systemd-oomd: the killed cgroup and why.
	JobID     string `json:"job_id,omitempty"`
	StepID    string `json:"step_id,omitempty"`
	OOMEvents *int   `json:"oom_events,omitempty"`
	Cgroup    string `json:"cgroup,omitempty"`
	Reason    string `json:"reason,omitempty"`
	// OOMKilled: what a container runtime said of the container ("reason:
	// OOMKilled" from Kubernetes, "OOMKilled": true/false from docker
	// inspect); absent when it said nothing.
	OOMKilled *bool `json:"oom_killed,omitempty"`
	// Platform is PlatformWindows when the log around the failure shows
	// Windows paths ('File "C:\...\site-packages\torch\..."'): there
	// is no OOM killer and no SIGKILL there. Absent otherwise (Linux, or
	// the log does not say).
	Platform string `json:"platform,omitempty"`
	// Message is the line that identified the incident.
	Message string `json:"message"`
}
