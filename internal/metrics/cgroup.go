package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// cgroupSource exports each job's memory cgroup: usage against its limit
// and the OOM counters the kernel keeps.
type cgroupSource struct{}

var (
	cgUsage = desc("job_cgroup_memory_usage_bytes", "The job's memory cgroup charge: memory.current (v2) or memory.usage_in_bytes (v1), page cache included.", jobLabelNames...)
	cgLimit = desc("job_cgroup_memory_limit_bytes", "The job's memory cgroup limit: memory.max (v2) or memory.limit_in_bytes (v1); absent when unlimited.", jobLabelNames...)
	cgHigh  = desc("job_cgroup_memory_high_bytes", "The job's memory.high throttling threshold (v2); absent when unset.", jobLabelNames...)
	cgSwap  = desc("job_cgroup_swap_bytes", "Swap charged to the job's cgroup: memory.swap.current (v2) or memory.stat total_swap (v1).", jobLabelNames...)
	cgOOM   = desc("job_cgroup_oom_kills_total",
		"Processes the kernel OOM killer killed in the job's cgroup: memory.events oom_kill (v2) or memory.oom_control oom_kill (v1, kernel 4.13+).", jobLabelNames...)
	cgMax = desc("job_cgroup_memory_max_events_total",
		"Times the job's cgroup hit its limit: memory.events max (v2) or memory.failcnt (v1).", jobLabelNames...)
)

func (cgroupSource) name() string { return "cgroup" }

func (cgroupSource) describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{cgUsage, cgLimit, cgHigh, cgSwap, cgOOM, cgMax} {
		ch <- d
	}
}

func (cgroupSource) collect(st *State, ch chan<- prometheus.Metric) error {
	if st.Sample == nil {
		return st.SampleErr
	}
	var missing []string
	for i := range st.Sample.Jobs {
		j := &st.Sample.Jobs[i]
		m := j.Cgroup
		if m == nil {
			missing = append(missing, j.ID)
			continue
		}
		l := jobLabels(j)
		gauge(ch, cgUsage, float64(m.UsageBytes), l...)
		if !m.Max.Unlimited {
			gauge(ch, cgLimit, float64(m.Max.Bytes), l...)
		}
		if m.High != nil && !m.High.Unlimited {
			gauge(ch, cgHigh, float64(m.High.Bytes), l...)
		}
		if m.SwapBytes != nil {
			gauge(ch, cgSwap, float64(*m.SwapBytes), l...)
		}
		if m.Events.OOMKill != nil {
			counter(ch, cgOOM, float64(*m.Events.OOMKill), l...)
		}
		if m.Events.Max != nil {
			counter(ch, cgMax, float64(*m.Events.Max), l...)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("cgroup of %v unreadable", missing)
	}
	return nil
}
