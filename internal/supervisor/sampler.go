package supervisor

import (
	"context"
	"time"

	"github.com/torchmem/torchmem/internal/gpu"
	"github.com/torchmem/torchmem/internal/jobcgroup"
	"github.com/torchmem/torchmem/internal/policy"
	"github.com/torchmem/torchmem/internal/procfs"
	"github.com/torchmem/torchmem/internal/sample"
	"github.com/torchmem/torchmem/internal/store"
)

// sampler turns internal/sample's Sample of the job (the same reader as
// `torchmem top`: fast tier every tick, PSS tier of the whole job every
// pssEvery on sample's PSSTogether schedule) into a store row and policy
// metrics. The cgroup's usage comes from the job's own group: the exact
// job total.
type sampler struct {
	smp     *sample.Sampler
	fs      procfs.FS
	cg      *jobcgroup.Group
	rootPID int

	lastPSS *int64
	// tick is the time of the tick being collected: the sample's clock,
	// so its PSS schedule runs on Config.Now like the rest of the run.
	tick time.Time
}

// pssEvery is how often the supervisor reads the PSS of every process of
// the job in one tick (sample.Options.PSSTogether). A stored PSS total sums figures read in that same
// tick only: summing a fresh figure of a new DataLoader worker with a
// seconds-old one of a main process that has grown since under-reports
// the job (a run that leaked into its limit showed PSS 100 MiB while its
// cgroup held 243 MiB).
const pssEvery = 5 * time.Second

// pssFirst is when the first whole read comes: the first tick reads every
// (new) process anyway, a second or so after exec; the next full read
// comes soon so that a short run has a PSS figure of the job at work, not
// only of its start.
const pssFirst = time.Second

// reading is one sample with the derived policy metrics and the job's
// per-process GPU memory.
type reading struct {
	s       store.Sample
	metrics map[string]float64
	gpuProc map[int]int64
	pids    []int
	// limit is the job cgroup's limit read with its usage (nil: none or
	// unlimited), for the status line and live view.
	limit *int64
	// mem is each process's anonymous RSS and, when this tick read its
	// smaps_rollup, its written private memory (copyonread.go).
	mem []procMem
	// psi is the host's memory pressure as the sample read it this tick
	// (nil: no PSI), for the policy's psi.memory.* metrics.
	psi *procfs.PSI
	// jobs is this tick's sample of the job and hostTotal the host's
	// MemTotal (0: unknown), for the live view (Live.Jobs copies them
	// only when there is one).
	jobs      []sample.Job
	hostTotal int64
}

func newSampler(procRoot, sysRoot string, b gpu.Backend, cg *jobcgroup.Group, rootPID int) (*sampler, error) {
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return nil, err
	}
	sm := &sampler{fs: fs, cg: cg, rootPID: rootPID}
	// PSS only every pssEvery for the whole job (PSSTogether), never early
	// on an RSS jump and never on a per-process period: walking the page
	// tables (smaps_rollup) of a process that is growing into the limit or
	// being OOM-killed delays the release of its memory, and in tests the
	// kernel then killed a second process of the job (the main one after
	// a DataLoader worker). Monitoring must not harm the job.
	// The job's cgroup is read through sm.cg (usage, limit, events), so the
	// sample need not read it again.
	sm.smp, err = sample.New(sample.Options{ProcRoot: procRoot, SysRoot: sysRoot, GPU: b, PIDs: sm.jobPIDs,
		NoCgroup: true, PSSTogether: true, PSSPeriod: pssEvery, PSSFirst: pssFirst, Now: sm.now})
	return sm, err
}

func (sm *sampler) collect(now time.Time, alloc allocTotals) reading {
	r := reading{s: store.Sample{Time: now}, metrics: map[string]float64{}, gpuProc: map[int]int64{}}
	sm.tick = now
	smp, err := sm.smp.Collect(context.Background())
	if err == nil {
		sm.host(&r, smp.Host)
		sm.job(&r, smp)
		sm.gpus(&r, smp.GPU)
	}
	sm.cgroup(&r)
	if alloc.n > 0 {
		r.s.AllocAllocated, r.s.AllocReserved = store.Int(alloc.allocated), store.Int(alloc.reserved)
		r.s.Extra = map[string]float64{
			store.ExtraAllocRetries: float64(alloc.retries),
			store.ExtraAllocOOMs:    float64(alloc.ooms),
		}
		if alloc.maxReservedFrac > 0 {
			r.metrics[policy.AllocReservedFraction] = alloc.maxReservedFrac
		}
	}
	if alloc.step >= 0 {
		r.s.Step = store.Int(alloc.step)
	}
	return r
}

// now is the sample's clock: the tick being collected.
func (sm *sampler) now() time.Time { return sm.tick }

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

func (sm *sampler) host(r *reading, h sample.Host) {
	r.psi = h.PSI
	mi := h.Meminfo
	if mi.MemTotalBytes != nil {
		r.hostTotal = int64(*mi.MemTotalBytes)
	}
	if mi.MemAvailableBytes == nil {
		return
	}
	avail := int64(*mi.MemAvailableBytes)
	r.s.HostAvailable = &avail
	r.metrics[policy.HostAvailableBytes] = float64(avail)
	if mi.MemTotalBytes != nil && *mi.MemTotalBytes > 0 {
		r.metrics[policy.HostUsedFraction] = 1 - float64(avail)/float64(*mi.MemTotalBytes)
	}
}

// job sums the job's processes: RSS and swap every tick (status), PSS
// when every process has a figure read in this very tick (smaps_rollup,
// its own tier; see pssEvery).
func (sm *sampler) job(r *reading, smp *sample.Sample) {
	var rss, swap, pss int64
	complete, read := true, smp.Tier.PSSRead > 0
	r.jobs = smp.Jobs
	for _, j := range smp.Jobs {
		rss += int64(j.Totals.RSSBytes)
		swap += int64(j.Totals.SwapBytes)
		pss += int64(j.Totals.PSSBytes)
		complete = complete && j.Totals.PSSComplete && j.Totals.PSSMaxAgeSeconds == 0
		for _, p := range j.Processes {
			r.pids = append(r.pids, p.PID)
			r.mem = append(r.mem, memOf(p))
			if p.GPUBytes != nil {
				r.gpuProc[p.PID] = *p.GPUBytes
			}
		}
	}
	if len(smp.Jobs) == 0 {
		return
	}
	r.s.RSSTotal, r.s.SwapTotal = &rss, &swap
	if read && complete {
		r.s.PSSTotal = &pss
		sm.lastPSS = &pss
		r.metrics[policy.JobPSSBytes] = float64(pss)
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
	r.limit = sm.cg.Limit()
	if l := r.limit; l != nil && *l > 0 {
		r.metrics[policy.CgroupUsageFraction] = float64(u) / float64(*l)
	}
}

func (sm *sampler) gpus(r *reading, g sample.GPU) {
	in := map[int]bool{}
	for _, p := range r.pids {
		in[p] = true
	}
	jobUsed := map[int]int64{}
	for _, p := range g.Processes {
		if in[p.PID] && p.UsedBytes != nil {
			jobUsed[p.GPUIndex] += *p.UsedBytes
		}
	}
	var maxFrac float64
	for _, d := range g.Devices {
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
	if len(g.Devices) > 0 {
		r.metrics[policy.GPUUsedFraction] = maxFrac
	}
}

// peaks folds a reading into the running maxima (store.PeakKey).
func (r reading) peaks(into store.Peaks) {
	up := func(k store.PeakKey, v *int64) {
		if v != nil && *v > 0 { // a series is recorded once above 0
			into.Raise(k, *v)
		}
	}
	up(store.PeakCgroupUsage, r.s.CgroupUsage)
	up(store.PeakPSSTotal, r.s.PSSTotal)
	up(store.PeakRSSTotal, r.s.RSSTotal)
	up(store.PeakSwapTotal, r.s.SwapTotal)
	up(store.PeakAllocAllocated, r.s.AllocAllocated)
	up(store.PeakAllocReserved, r.s.AllocReserved)
	for i, v := range r.s.GPUUsed {
		up(store.PeakGPUUsed(i), v)
	}
	for i, v := range r.s.GPUJobUsed {
		up(store.PeakGPUJobUsed(i), v)
	}
	for pid, v := range r.gpuProc {
		up(store.PeakGPUPID(pid), &v)
	}
}
