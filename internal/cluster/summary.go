package cluster

import "time"

// Summary is the cluster as Prometheus saw it at Time.
type Summary struct {
	// Prometheus is the base URL queried.
	Prometheus string    `json:"prometheus"`
	Time       time.Time `json:"time"`
	// WindowSeconds is how far back OOMs are counted and a silent agent
	// is still listed (as down, with when it was last seen).
	WindowSeconds float64 `json:"window_seconds"`
	Nodes         []Node  `json:"nodes"`
	// Warnings are what Prometheus said besides the answers (a query
	// that hit a limit, a partial answer).
	Warnings []string `json:"warnings,omitempty"`
}

// Node is one torchmem agent: one scrape target.
type Node struct {
	// Name is the agent's torchmem_node_info node label, or its instance
	// when it exports none (agents before node_info).
	Name string `json:"name"`
	// Instance and ScrapeJob are Prometheus's target labels.
	Instance  string `json:"instance"`
	ScrapeJob string `json:"scrape_job"`
	// Up is Prometheus's up == 1 for the target at Time.
	Up bool `json:"up"`
	// LastSeen is the agent's newest sample time in the window
	// (torchmem_sample_timestamp_seconds); nil when it sent none.
	LastSeen *time.Time `json:"last_seen,omitempty"`
	Version  string     `json:"version,omitempty"`
	// MemTotalBytes and MemAvailableBytes are the host's /proc/meminfo,
	// nil when the agent is down or did not export them.
	MemTotalBytes     *float64 `json:"mem_total_bytes,omitempty"`
	MemAvailableBytes *float64 `json:"mem_available_bytes,omitempty"`
	GPUs              []GPU    `json:"gpus"`
	Jobs              []Job    `json:"jobs"`
	OOMs              OOMs     `json:"ooms"`
}

// GPU is one device of a node (torchmem_gpu_info and its memory series).
type GPU struct {
	Index      string   `json:"index"`
	UUID       string   `json:"uuid,omitempty"`
	Model      string   `json:"model,omitempty"`
	UsedBytes  *float64 `json:"used_bytes,omitempty"`
	TotalBytes *float64 `json:"total_bytes,omitempty"`
}

// Job is one PyTorch job a node's agent saw at Time.
type Job struct {
	ID      string `json:"job_id"`
	Command string `json:"command,omitempty"`
	// Run is the torchmem run supervising the job, "" when none.
	Run string `json:"run,omitempty"`
	// Workload holds job_info's other labels: who the job belongs to
	// (pod, namespace, Slurm job, container) where the agent exports them.
	Workload  map[string]string `json:"workload,omitempty"`
	Processes *float64          `json:"processes,omitempty"`
	RSSBytes  *float64          `json:"rss_bytes,omitempty"`
	PSSBytes  *float64          `json:"pss_bytes,omitempty"`
	GPUBytes  *float64          `json:"gpu_bytes,omitempty"`
	// CgroupUsageBytes and CgroupLimitBytes are the job's memory cgroup;
	// the limit is nil when unlimited.
	CgroupUsageBytes *float64 `json:"cgroup_usage_bytes,omitempty"`
	CgroupLimitBytes *float64 `json:"cgroup_limit_bytes,omitempty"`
	// OOMKills and CUDAOOMs are this job's increases in the window.
	OOMKills int `json:"oom_kills"`
	CUDAOOMs int `json:"cuda_ooms"`
}

// OOMs counts a node's out-of-memory events within the window.
type OOMs struct {
	// HostKills is the kernel OOM killer's kills on the node (vmstat).
	HostKills int `json:"host_kills"`
	// Incidents are the kernel-log incidents serve explained, by kind.
	Incidents map[string]int `json:"incidents,omitempty"`
	// JobKills and CUDA are per job id, including jobs that are gone.
	JobKills map[string]int `json:"job_kills,omitempty"`
	CUDA     map[string]int `json:"cuda,omitempty"`
}

// Total is the node's OOM events in the window. One kernel kill is
// seen by up to three counters (vmstat, the job's cgroup, the kernel
// log), so the kernel's share is the largest of them, not their sum; a
// CUDA OOM is seen only by the allocator hook and is added.
func (o OOMs) Total() int {
	kernel := max(o.HostKills, sum(o.JobKills), sum(o.Incidents))
	return kernel + sum(o.CUDA)
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
