package supervisor

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/torchmem/torchmem/internal/hook"
	"github.com/torchmem/torchmem/internal/jobs"
	"github.com/torchmem/torchmem/internal/oomexplain"
	"github.com/torchmem/torchmem/internal/units"
)

// CopyOnRead is DataLoader workers copying the dataset on read;
// internal/oomexplain owns it (and the advice it calls for).
type CopyOnRead = oomexplain.CopyOnRead

// Thresholds of detectCopyOnRead.
const (
	// corMinGrowth is the private-memory growth over a worker's life that
	// counts: less is the worker's own batches, prefetch queue and
	// interpreter state (a worker reading a memmap grew by 21 MiB in
	// TestCopyOnReadRealDataLoader, one copying a list of 1,000,000 items by 85 MiB).
	corMinGrowth = 48 << 20
	// corParentMaxRatio: the parent's anonymous RSS may grow over the same
	// time by at most this fraction of the worker's growth. A parent that
	// grows as much is a leak of the whole job (growth.go), not
	// copy-on-read; a parent iterating the loader grows a little by itself
	// (received batches, the prefetch queue: 23 MiB against 59 MiB per
	// worker in TestCopyOnReadRealDataLoader).
	corParentMaxRatio = 0.5
	// corMinShare of the measured workers must grow: one worker that
	// happens to hold a big batch is not the pattern.
	corMinShare = 0.5
	// corMaxProcs bounds the processes tracked: workers restart every
	// epoch (unless persistent_workers), so a long run has thousands.
	corMaxProcs = 4096
)

// procMem is one process's memory at one tick: its anonymous RSS
// (status, every tick) and, when this tick read its smaps_rollup, its
// written private memory (Private_Dirty; -1 when not read). A copy made on
// write is dirty; a worker reading a memory-mapped dataset only adds clean
// file pages that it alone maps, which USS counts as private too but the
// kernel can drop at any time: they are not the pattern. The parent is
// measured by anonymous RSS because the workers' copies leave it as it
// is, while its Private_Dirty rises as they copy (a page every child has
// copied is the parent's alone again).
type procMem struct {
	pid, ppid   int
	anon, dirty int64
}

func memOf(p jobs.Process) procMem {
	m := procMem{pid: p.PID, ppid: p.PPid, anon: -1, dirty: -1}
	if p.RSSAnonBytes != nil {
		m.anon = int64(*p.RSSAnonBytes)
	}
	if p.PrivateDirtyBytes != nil && p.PSSAgeSeconds != nil && *p.PSSAgeSeconds == 0 {
		m.dirty = int64(*p.PrivateDirtyBytes)
	}
	return m
}

// workerTrack keeps each process's first and last private-memory read and
// its parent's anonymous RSS at the same two ticks: all detectCopyOnRead
// needs, in a fixed size per process whatever the run's length.
type workerTrack struct {
	procs    map[int]*memSpan
	order    []int // first-seen order, to drop the oldest past corMaxProcs
	reported bool  // the copy_on_read event was sent
}

type memSpan struct {
	ppid                       int
	first, last                time.Time
	dirty0, dirty1, par0, par1 int64
}

// add records one tick. A process is tracked from a tick where its
// smaps_rollup was read (a new process is read on its first tick) and its
// parent's RSS is known.
func (w *workerTrack) add(now time.Time, ms []procMem) {
	anon := make(map[int]int64, len(ms))
	for _, m := range ms {
		anon[m.pid] = m.anon
	}
	if w.procs == nil {
		w.procs = map[int]*memSpan{}
	}
	for _, m := range ms {
		par, ok := anon[m.ppid]
		if m.dirty < 0 || !ok || par < 0 {
			continue
		}
		sp := w.procs[m.pid]
		if sp == nil || sp.ppid != m.ppid { // new, or a reused PID
			w.forgetOldest()
			sp = &memSpan{ppid: m.ppid, first: now, dirty0: m.dirty, par0: par}
			w.procs[m.pid] = sp
			w.order = append(w.order, m.pid)
		}
		sp.last, sp.dirty1, sp.par1 = now, m.dirty, par
	}
}

func (w *workerTrack) forgetOldest() {
	for len(w.procs) >= corMaxProcs && len(w.order) > 0 {
		delete(w.procs, w.order[0])
		w.order = w.order[1:]
	}
}

// rows are the DataLoader workers (by their hook's hello) read at least
// twice.
func (w *workerTrack) rows(hello map[int]*hook.Hello) []oomexplain.WorkerGrowth {
	var out []oomexplain.WorkerGrowth
	for _, pid := range w.order {
		sp, h := w.procs[pid], hello[pid]
		if sp == nil || h == nil || !h.Worker || !sp.last.After(sp.first) {
			continue
		}
		out = append(out, oomexplain.WorkerGrowth{PID: pid, ParentPID: sp.ppid, FirstPrivate: sp.dirty0, LastPrivate: sp.dirty1,
			ParentFirstAnon: sp.par0, ParentLastAnon: sp.par1, Seconds: sp.last.Sub(sp.first).Seconds()})
	}
	return out
}

// detect is detectCopyOnRead over the workers tracked so far.
func (w *workerTrack) detect(hello map[int]*hook.Hello) *CopyOnRead {
	return detectCopyOnRead(w.rows(hello))
}

// detectCopyOnRead decides whether DataLoader workers copy the dataset on
// read: at least corMinShare of the workers read twice grew by
// corMinGrowth or more while their parent grew by at most
// corParentMaxRatio of that. Nil when not.
func detectCopyOnRead(ws []oomexplain.WorkerGrowth) *CopyOnRead {
	var grew []int64
	c := &CopyOnRead{Measured: len(ws)}
	for i := range ws {
		w := &ws[i]
		g := w.Growth()
		w.Grew = g >= corMinGrowth && float64(w.ParentGrowth()) <= corParentMaxRatio*float64(g)
		if w.Grew {
			grew = append(grew, g)
			c.TotalGrowthBytes += g
			c.ParentGrowthBytes = max(c.ParentGrowthBytes, w.ParentGrowth())
		}
	}
	c.Workers = len(grew)
	if c.Workers == 0 || float64(c.Workers) < corMinShare*float64(c.Measured) {
		return nil
	}
	slices.Sort(grew)
	c.MedianGrowthBytes = grew[len(grew)/2]
	c.PerWorker = slices.Clone(ws)
	slices.SortStableFunc(c.PerWorker, func(a, b oomexplain.WorkerGrowth) int { return cmp.Compare(b.Growth(), a.Growth()) })
	if len(c.PerWorker) > oomexplain.MaxCopyOnReadRows {
		c.PerWorker = c.PerWorker[:oomexplain.MaxCopyOnReadRows]
	}
	return c
}

// trackWorkers records a PSS read of the job and, the first time the
// workers copy on read, says so in an event.
func (s *sup) trackWorkers(r reading) {
	w := &s.growth.workers
	if r.mem == nil {
		return
	}
	w.add(r.s.Time, r.mem)
	if w.reported {
		return
	}
	if c := w.detect(s.hk.hello); c != nil {
		w.reported = true
		s.event(r.s.Time, "copy_on_read", "supervisor", 0, fmt.Sprintf(
			"DataLoader workers copy the dataset on read: %d of %d workers' written private memory (Private_Dirty) grew by %s each (median) while their parent's grew by at most %s; store the dataset as numpy arrays or memory-mapped files, not Python lists of objects, or use persistent_workers=False",
			c.Workers, c.Measured, units.Bytes(c.MedianGrowthBytes), units.Bytes(c.ParentGrowthBytes)), c)
	}
}
