package store

import (
	"fmt"
	"strconv"
	"strings"
)

// PeakKey names one of a run's peaks: the highest value a series reached
// over the run, in bytes. The run supervisor writes them (Finish.Peaks,
// DB.UpdatePeaks); runs, show, report, serve and /metrics read them. They
// are the keys of the stored JSON object, so a key never changes spelling:
// old databases must read the same.
//
// A stored peaks object looks like
//
//	{"alloc_allocated":6442450944,"alloc_peak_allocated":7516192768,
//	 "alloc_peak_reserved":8589934592,"alloc_reserved":7516192768,
//	 "cgroup_usage":2147483648,"gpu0_job_used":39728447488,
//	 "gpu0_used":40802189312,"gpu_pid_4127":39728447488,"pss_total":1932735283,
//	 "rss_total":2362232012}
//
// A sampled series is recorded once it is above 0 (no "swap_total" for a
// job that never swapped); the allocator's peaks from the first hooked
// process on, 0 included.
//
// Besides the constants below there are three families with a number in
// the name: PeakGPUUsed, PeakGPUJobUsed and PeakGPUPID. KnownPeakKey says
// whether a string is one of them all.
type PeakKey string

// The peaks sampled every tick (PSS every few seconds) and folded into
// the run's maxima, and the hook's allocator high-water marks.
const (
	// PeakCgroupUsage: the job cgroup's usage (memory.current, v1
	// memory.usage_in_bytes) each tick, raised at the end to the kernel's
	// own high-water mark (memory.peak, memory.max_usage_in_bytes). The
	// exact job total.
	PeakCgroupUsage PeakKey = "cgroup_usage"
	// PeakPSSTotal: the job's PSS summed over its processes
	// (smaps_rollup), only from ticks where every process was read
	// together; read every few seconds, so it can miss a short spike.
	PeakPSSTotal PeakKey = "pss_total"
	// PeakRSSTotal: the job's RSS summed over its processes
	// (/proc/<pid>/status); counts shared pages once per process.
	PeakRSSTotal PeakKey = "rss_total"
	// PeakSwapTotal: the job's swap summed over its processes (status).
	PeakSwapTotal PeakKey = "swap_total"
	// PeakAllocAllocated and PeakAllocReserved: the PyTorch allocator's
	// allocated and reserved bytes summed over the hooked processes and
	// their devices, as sampled (Sample.AllocAllocated, AllocReserved).
	PeakAllocAllocated PeakKey = "alloc_allocated"
	PeakAllocReserved  PeakKey = "alloc_reserved"
	// PeakAllocPeakAllocated and PeakAllocPeakReserved: the allocator's
	// own high-water marks (memory_stats() allocated_bytes.all.peak,
	// reserved_bytes.all.peak), the largest of any one device of any
	// hooked process. Written as soon as a process is hooked, 0 included.
	PeakAllocPeakAllocated PeakKey = "alloc_peak_allocated"
	PeakAllocPeakReserved  PeakKey = "alloc_peak_reserved"
)

// peakKeys is every constant PeakKey, for KnownPeakKey.
var peakKeys = []PeakKey{PeakCgroupUsage, PeakPSSTotal, PeakRSSTotal, PeakSwapTotal,
	PeakAllocAllocated, PeakAllocReserved, PeakAllocPeakAllocated, PeakAllocPeakReserved}

// PeakGPUUsed is "gpu<index>_used": the used memory of GPU index as NVML
// reports it, the whole device (other users' processes included).
func PeakGPUUsed(index int) PeakKey { return PeakKey(fmt.Sprintf("gpu%d_used", index)) }

// PeakGPUJobUsed is "gpu<index>_job_used": what the job's processes hold
// on GPU index (NVML's per-process figures, summed).
func PeakGPUJobUsed(index int) PeakKey { return PeakKey(fmt.Sprintf("gpu%d_job_used", index)) }

// PeakGPUPID is "gpu_pid_<pid>": what process pid held on all GPUs (NVML).
func PeakGPUPID(pid int) PeakKey { return PeakKey(fmt.Sprintf("gpu_pid_%d", pid)) }

// GPUUsedIndex returns the device index of a PeakGPUUsed key, and false
// for any other key (gpu<i>_job_used included).
func (k PeakKey) GPUUsedIndex() (int, bool) {
	return numbered(string(k), "gpu", "_used")
}

// KnownPeakKey reports whether k is a declared peak key: a constant
// PeakKey or one of the GPU families.
func KnownPeakKey(k string) bool {
	for _, c := range peakKeys {
		if k == string(c) {
			return true
		}
	}
	_, used := numbered(k, "gpu", "_used")
	_, job := numbered(k, "gpu", "_job_used")
	_, pid := numbered(k, "gpu_pid_", "")
	return used || job || pid
}

// numbered parses prefix<n>suffix, n a non-negative decimal number.
func numbered(k, prefix, suffix string) (int, bool) {
	s, ok := strings.CutPrefix(k, prefix)
	if !ok {
		return 0, false
	}
	if s, ok = strings.CutSuffix(s, suffix); !ok || s == "" || s[0] == '+' || s[0] == '-' {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// Peaks are a run's peaks by key (see PeakKey), bytes. A plain
// map[string]int64 converts to and from it; its JSON is the same.
type Peaks map[string]int64

// Get returns the peak k and whether the run has one.
func (p Peaks) Get(k PeakKey) (int64, bool) {
	v, ok := p[string(k)]
	return v, ok
}

// Value returns the peak k, 0 when the run has none.
func (p Peaks) Value(k PeakKey) int64 { return p[string(k)] }

// Raise makes the peak k the larger of its value and v, recording k even
// when v is 0 (the allocator's peaks of a hooked job that has not used
// CUDA yet are 0, not absent).
func (p Peaks) Raise(k PeakKey, v int64) {
	p[string(k)] = max(p[string(k)], v)
}
