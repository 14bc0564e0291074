package snapshot

import "sort"

// interval is an allocation or a segment alive over a run of trace
// entries: from start (-1: already there before the first entry) up to but
// not including end (len(trace): still there at the snapshot).
type interval struct {
	start, end int
	size       int64
	addr       uint64
	stack      StackID
}

// allocIntervals returns device dev's allocations that are alive at some
// entry of [w0, w1), in the order they were made (older than the trace
// first). Sizes are the requested sizes the trace records, so at every
// entry the live intervals add up to the timeline's allocated level. An
// allocation ends at its free_completed entry, as in Replay.
func (s *Snapshot) allocIntervals(dev, w0, w1 int) []interval {
	trace := s.Traces[dev]
	n := len(trace)
	seen := map[uint64]bool{}
	open := map[uint64]interval{}
	for i := range trace {
		e := &trace[i]
		if e.Action != ActionAlloc && e.Action != ActionFreeRequested && e.Action != ActionFreeCompleted || seen[e.Addr] {
			continue
		}
		seen[e.Addr] = true
		if e.Action != ActionAlloc { // made before the trace, freed in it
			open[e.Addr] = interval{start: -1, end: n, size: e.Size, addr: e.Addr, stack: stackBeforeTrace}
		}
	}
	var out []interval
	keep := func(iv interval) {
		if iv.end > w0 && iv.start < w1 {
			out = append(out, iv)
		}
	}
	s.forBlocks(dev, func(b *Block) {
		if !seen[b.Address] && b.State != StateInactive {
			keep(interval{start: -1, end: n, size: b.Requested, addr: b.Address, stack: b.Stack})
		}
	})
	for i := range trace {
		e := &trace[i]
		switch e.Action {
		case ActionAlloc:
			open[e.Addr] = interval{start: i, end: n, size: e.Size, addr: e.Addr, stack: e.Stack}
		case ActionFreeCompleted:
			if iv, ok := open[e.Addr]; ok {
				iv.end = i
				keep(iv)
				delete(open, e.Addr)
			}
		}
	}
	for _, iv := range open {
		keep(iv)
	}
	sortIntervals(out)
	return out
}

func (s *Snapshot) forBlocks(dev int, visit func(*Block)) {
	for i := range s.Segments {
		if s.Segments[i].Device == int64(dev) {
			for j := range s.Segments[i].Blocks {
				visit(&s.Segments[i].Blocks[j])
			}
		}
	}
}

// sortIntervals orders by start, then address: older than the trace
// first, then as the trace made them.
func sortIntervals(out []interval) {
	sort.Slice(out, func(i, j int) bool {
		if out[i].start != out[j].start {
			return out[i].start < out[j].start
		}
		return out[i].addr < out[j].addr
	})
}

// segmentIntervals returns device dev's reserved memory as intervals:
// one per segment_alloc or segment_map, ended by the segment_free or
// segment_unmap covering it (what an unmap leaves of a mapping goes on as
// a new interval), plus what the snapshot's segments hold that the trace
// never mapped (reserved before the trace).
func (s *Snapshot) segmentIntervals(dev int) []interval {
	trace := s.Traces[dev]
	n := len(trace)
	var out []interval
	var live []int // indexes into out
	for i := range trace {
		e := &trace[i]
		switch e.Action {
		case ActionSegmentAlloc, ActionSegmentMap:
			live = append(live, len(out))
			out = append(out, interval{start: i, end: n, size: e.Size, addr: e.Addr, stack: e.Stack})
		case ActionSegmentFree, ActionSegmentUnmap:
			var hit bool
			live, out, hit = unmap(live, out, i, e.Addr, e.Addr+uint64(e.Size))
			if !hit {
				out = append(out, interval{start: -1, end: i, size: e.Size, addr: e.Addr})
			}
		}
	}
	for i := range s.Segments {
		if seg := &s.Segments[i]; seg.Device == int64(dev) {
			out = append(out, uncovered(seg, out, live, n)...)
		}
	}
	sortIntervals(out)
	return out
}

// unmap ends the live intervals overlapping [lo, hi) at entry i; the parts
// of them outside the range start again at i.
func unmap(live []int, out []interval, i int, lo, hi uint64) ([]int, []interval, bool) {
	var next []int
	hit := false
	for _, k := range live {
		iv := out[k]
		end := iv.addr + uint64(iv.size)
		if iv.addr >= hi || end <= lo {
			next = append(next, k)
			continue
		}
		hit = true
		out[k].end = i
		if iv.addr < lo {
			next = append(next, len(out))
			out = append(out, interval{start: i, end: iv.end, size: int64(lo - iv.addr), addr: iv.addr, stack: iv.stack})
		}
		if end > hi {
			next = append(next, len(out))
			out = append(out, interval{start: i, end: iv.end, size: int64(end - hi), addr: hi, stack: iv.stack})
		}
	}
	return next, out, hit
}

// uncovered returns the parts of seg no live interval covers, as
// intervals reserved before the trace and kept to the snapshot.
func uncovered(seg *Segment, out []interval, live []int, n int) []interval {
	lo, hi := seg.Address, seg.Address+uint64(max(seg.TotalSize, 0))
	var in []interval
	for _, k := range live {
		if iv := out[k]; iv.addr < hi && iv.addr+uint64(iv.size) > lo {
			in = append(in, iv)
		}
	}
	sort.Slice(in, func(i, j int) bool { return in[i].addr < in[j].addr })
	var gaps []interval
	at := lo
	for _, iv := range append(in, interval{addr: hi}) {
		if iv.addr > at {
			gaps = append(gaps, interval{start: -1, end: n, size: int64(iv.addr - at), addr: at, stack: seg.Stack})
		}
		at = max(at, iv.addr+uint64(iv.size))
	}
	return gaps
}
