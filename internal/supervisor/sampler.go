package supervisor

import (
	"fmt"
	"time"

	"github.com/torchmem/torchmem/internal/gpu"
	"github.com/torchmem/torchmem/internal/jobcgroup"
	"github.com/torchmem/torchmem/internal/policy"
	"github.com/torchmem/torchmem/internal/procfs"
	"github.com/torchmem/torchmem/internal/store"
)

// sampler takes one Sample from the cgroup, /proc, the GPU backend and the
// latest allocator stats. Reading smaps_rollup walks page tables (~2.5 ms
// per torch process), so PSS is a slower tier whose period adapts to keep
// its cost under 1% of wall time; the fast tier reads counters only.
type sampler struct {
	fs      procfs.FS
	cg      *jobcgroup.Group
	gpu     gpu.Backend
	rootPID int

	nextPSS   time.Time
	lastPSS   *int64
	lastPSSAt time.Time
	gpuOff    bool
}

// reading is one sample with the derived policy metrics and the job's
// per-process GPU memory.
type reading struct {
	s       store.Sample
	metrics map[string]float64
	gpuProc map[int]int64
	pids    []int
}

func (sm *sampler) collect(now time.Time, alloc allocTotals) reading {
	r := reading{s: store.Sample{Time: now}, metrics: map[string]float64{}, gpuProc: map[int]int64{}}
	r.pids = sm.jobPIDs()
	sm.host(&r)
	sm.cgroup(&r)
	sm.procs(&r, now)
	sm.gpus(&r)
	if alloc.n > 0 {
		r.s.AllocAllocated, r.s.AllocReserved = store.Int(alloc.allocated), store.Int(alloc.reserved)
		if alloc.maxReservedFrac > 0 {
			r.metrics[policy.AllocReservedFraction] = alloc.maxReservedFrac
		}
	}
	if alloc.step >= 0 {
		r.s.Step = store.Int(alloc.step)
	}
	return r
}

func (sm *sampler) jobPIDs() []int {
	if sm.cg != nil {
		if p, err := sm.cg.Procs(); err == nil {
			return p
		}
	}
	return sm.descendants()
}

// descendants lists rootPID and its descendants (monitor-only mode).
func (sm *sampler) descendants() []int {
	all, err := sm.fs.PIDs()
	if err != nil {
		return []int{sm.rootPID}
	}
	parent := map[int]int{}
	for _, p := range all {
		if st, err := sm.fs.Status(p); err == nil {
			parent[p] = st.PPid
		}
	}
	in := map[int]bool{sm.rootPID: true}
	out := []int{sm.rootPID}
	for changed := true; changed; {
		changed = false
		for p, pp := range parent {
			if !in[p] && in[pp] {
				in[p], changed = true, true
				out = append(out, p)
			}
		}
	}
	return out
}

func (sm *sampler) host(r *reading) {
	mi, err := sm.fs.Meminfo()
	if err != nil || mi.MemAvailableBytes == nil {
		return
	}
	avail := int64(*mi.MemAvailableBytes)
	r.s.HostAvailable = &avail
	r.metrics[policy.HostAvailableBytes] = float64(avail)
	if mi.MemTotalBytes != nil && *mi.MemTotalBytes > 0 {
		r.metrics[policy.HostUsedFraction] = 1 - float64(avail)/float64(*mi.MemTotalBytes)
	}
}

func (sm *sampler) cgroup(r *reading) {
	if sm.cg == nil {
		return
	}
	u, err := sm.cg.Usage()
	if err != nil {
		return
	}
	r.s.CgroupUsage = &u
	r.metrics[policy.CgroupUsageBytes] = float64(u)
	if l := sm.cg.Limit(); l != nil && *l > 0 {
		r.metrics[policy.CgroupUsageFraction] = float64(u) / float64(*l)
	}
}

func (sm *sampler) procs(r *reading, now time.Time) {
	var rss, swap int64
	for _, p := range r.pids {
		st, err := sm.fs.Status(p)
		if err != nil {
			continue // vanished between listing and reading
		}
		if st.VmRSSBytes != nil {
			rss += int64(*st.VmRSSBytes)
		}
		if st.VmSwapBytes != nil {
			swap += int64(*st.VmSwapBytes)
		}
	}
	r.s.RSSTotal, r.s.SwapTotal = &rss, &swap
	if now.Before(sm.nextPSS) {
		return
	}
	t0 := time.Now()
	var pss int64
	for _, p := range r.pids {
		if sr, err := sm.fs.SmapsRollup(p); err == nil {
			pss += int64(sr.PssBytes)
		}
	}
	cost := time.Since(t0)
	// At least every 5 s, at most 1% of wall time.
	sm.nextPSS = now.Add(max(5*time.Second, 100*cost))
	sm.lastPSS, sm.lastPSSAt = &pss, now
	r.s.PSSTotal = &pss
	r.metrics[policy.JobPSSBytes] = float64(pss)
}

func (sm *sampler) gpus(r *reading) {
	if sm.gpu == nil || sm.gpuOff {
		return
	}
	devs, err := sm.gpu.Devices()
	if err != nil {
		sm.gpuOff = true // one failure means the backend is gone; don't retry each tick
		return
	}
	in := map[int]bool{}
	for _, p := range r.pids {
		in[p] = true
	}
	procs, _ := sm.gpu.Processes()
	jobUsed := map[int]int64{}
	for _, p := range procs {
		if in[p.PID] && p.UsedBytes != nil {
			jobUsed[p.GPUIndex] += *p.UsedBytes
			r.gpuProc[p.PID] += *p.UsedBytes
		}
	}
	var maxFrac float64
	for _, d := range devs {
		for len(r.s.GPUUsed) <= d.Index {
			r.s.GPUUsed, r.s.GPUJobUsed = append(r.s.GPUUsed, nil), append(r.s.GPUJobUsed, nil)
		}
		r.s.GPUUsed[d.Index] = store.Int(d.UsedBytes)
		if u, ok := jobUsed[d.Index]; ok {
			r.s.GPUJobUsed[d.Index] = store.Int(u)
		}
		// Only GPUs the job uses count, unless it uses none yet.
		if d.TotalBytes > 0 && (len(jobUsed) == 0 || jobUsed[d.Index] > 0) {
			maxFrac = max(maxFrac, float64(d.UsedBytes)/float64(d.TotalBytes))
		}
	}
	if len(devs) > 0 {
		r.metrics[policy.GPUUsedFraction] = maxFrac
	}
}

// peaks folds a reading into the running maxima by series name.
func (r reading) peaks(into map[string]int64) {
	up := func(k string, v *int64) {
		if v != nil && *v > into[k] {
			into[k] = *v
		}
	}
	up("cgroup_usage", r.s.CgroupUsage)
	up("pss_total", r.s.PSSTotal)
	up("rss_total", r.s.RSSTotal)
	up("swap_total", r.s.SwapTotal)
	up("alloc_allocated", r.s.AllocAllocated)
	up("alloc_reserved", r.s.AllocReserved)
	for i, v := range r.s.GPUUsed {
		up(fmt.Sprintf("gpu%d_used", i), v)
	}
	for i, v := range r.s.GPUJobUsed {
		up(fmt.Sprintf("gpu%d_job_used", i), v)
	}
	for pid, v := range r.gpuProc {
		up(fmt.Sprintf("gpu_pid_%d", pid), &v)
	}
}
