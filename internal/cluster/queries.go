package cluster

import (
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/common/model"
)

// The names of the queries Fetch runs; Assemble reads their results.
const (
	qAgents    = "agents"    // targets that exported torchmem in the window, with the version
	qUp        = "up"        // Prometheus's liveness of every target
	qNode      = "node"      // torchmem_node_info: the node's name
	qSeen      = "last_seen" // the agent's newest sample time
	qLive      = "live"      // the current job, GPU and host series, by __name__
	qHostOOM   = "host_oom"  // kernel OOM kills on the node
	qIncidents = "incidents" // kernel-log OOM incidents serve explained, by kind
	qJobOOM    = "job_oom"   // OOM kills in each job's cgroup
	qCUDAOOM   = "cuda_oom"  // CUDA OOMs the allocator hook saw, per job
)

// DefaultWindow is how far back OOMs are counted and a silent agent is
// still listed: an hour covers a restart of a job and a look at what
// happened, while a node retired yesterday drops off the view.
const DefaultWindow = time.Hour

// liveMetrics are the series shown as they are now. A down agent's
// series go stale at once (Prometheus marks them at the failed scrape),
// so a down node shows no jobs rather than its last ones as current.
var liveMetrics = []string{
	"job_info", "job_processes", "job_rss_bytes", "job_pss_bytes", "job_gpu_memory_bytes",
	"job_cgroup_memory_usage_bytes", "job_cgroup_memory_limit_bytes",
	"gpu_info", "gpu_memory_used_bytes", "gpu_memory_total_bytes",
	"host_memory_total_bytes", "host_memory_available_bytes",
}

// Queries returns the PromQL of each query over window w.
func Queries(w time.Duration) map[string]string {
	r := "[" + model.Duration(w).String() + "]"
	return map[string]string{
		qAgents:    "last_over_time(torchmem_build_info" + r + ")",
		qUp:        "up and on (job) last_over_time(torchmem_build_info" + r + ")",
		qNode:      "last_over_time(torchmem_node_info" + r + ")",
		qSeen:      "last_over_time(torchmem_sample_timestamp_seconds" + r + ")",
		qLive:      fmt.Sprintf(`{__name__=~"torchmem_(%s)"}`, strings.Join(liveMetrics, "|")),
		qHostOOM:   "increase(torchmem_host_oom_kills_total" + r + ")",
		qIncidents: "sum by (job, instance, kind) (increase(torchmem_oom_incidents_total" + r + "))",
		qJobOOM:    "increase(torchmem_job_cgroup_oom_kills_total" + r + ")",
		qCUDAOOM:   "increase(torchmem_job_allocator_ooms_total" + r + ")",
	}
}
