package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// hostSource exports /proc/meminfo and /proc/pressure/memory.
type hostSource struct{}

var (
	hostTotal     = desc("host_memory_total_bytes", "MemTotal from /proc/meminfo.")
	hostAvailable = desc("host_memory_available_bytes", "MemAvailable from /proc/meminfo: what can be allocated without swapping.")
	hostShmem     = desc("host_memory_shmem_bytes", "Shmem from /proc/meminfo (tmpfs, /dev/shm: DataLoader tensors live there).")
	hostSwapTotal = desc("host_swap_total_bytes", "SwapTotal from /proc/meminfo.")
	hostSwapFree  = desc("host_swap_free_bytes", "SwapFree from /proc/meminfo.")
	hostOOM       = desc("host_oom_kills_total", "Processes the kernel OOM killer killed on this node since boot (/proc/vmstat oom_kill, kernel 4.13+).")
	hostPSI       = desc("host_memory_pressure_stall_seconds_total",
		"Time tasks stalled on memory, from /proc/pressure/memory totals: kind some (at least one task) or full (all non-idle tasks).", "kind")
)

func (hostSource) name() string { return "host" }

func (hostSource) describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{hostTotal, hostAvailable, hostShmem, hostSwapTotal, hostSwapFree, hostOOM, hostPSI} {
		ch <- d
	}
}

func (hostSource) collect(st *State, ch chan<- prometheus.Metric) error {
	if st.Sample == nil {
		return st.SampleErr
	}
	m := st.Sample.Host.Meminfo
	for _, f := range []struct {
		d *prometheus.Desc
		v *uint64
	}{{hostTotal, m.MemTotalBytes}, {hostAvailable, m.MemAvailableBytes}, {hostShmem, m.ShmemBytes},
		{hostSwapTotal, m.SwapTotalBytes}, {hostSwapFree, m.SwapFreeBytes}} {
		if f.v != nil {
			gauge(ch, f.d, float64(*f.v))
		}
	}
	if st.HostOOMKills != nil {
		counter(ch, hostOOM, float64(*st.HostOOMKills))
	}
	if p := st.Sample.Host.PSI; p != nil {
		if p.Some != nil {
			counter(ch, hostPSI, float64(p.Some.TotalMicros)/1e6, "some")
		}
		if p.Full != nil {
			counter(ch, hostPSI, float64(p.Full.TotalMicros)/1e6, "full")
		}
	}
	return nil
}
