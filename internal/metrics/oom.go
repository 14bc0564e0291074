package metrics

import "github.com/prometheus/client_golang/prometheus"

// oomSource exports the kernel OOM incidents `torchmem serve` saw in this
// boot's kernel log, counted by kind and by the verdict internal/oomexplain
// gave them (the same verdicts as `torchmem oom`), so an alert can say
// "a memory cgroup limit" or "the host" without anyone reading dmesg.
type oomSource struct{}

var oomIncidents = desc("oom_incidents_total",
	"Out-of-memory incidents in this boot's kernel log (kernel OOM kills and the other kinds `torchmem oom` finds), by kind and verdict as `torchmem oom` explains them.",
	"kind", "verdict")

// OOMKey is one series of oom_incidents_total.
type OOMKey struct{ Kind, Verdict string }

func (oomSource) name() string { return "kernel_log" }

func (oomSource) describe(ch chan<- *prometheus.Desc) { ch <- oomIncidents }

// collect: absent when serve does not follow the kernel log (no source
// given), failed when the log could not be read.
func (oomSource) collect(st *State, ch chan<- prometheus.Metric) error {
	if !st.OOMWatched {
		return errAbsent
	}
	for k, n := range st.OOMIncidents {
		counter(ch, oomIncidents, float64(n), k.Kind, k.Verdict)
	}
	return st.OOMErr
}
