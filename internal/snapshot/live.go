package snapshot

// liveAlloc is an allocation alive at some point of the trace.
type liveAlloc struct {
	addr  uint64
	size  int64
	stack StackID
	index int   // trace index of its alloc entry, -1 if before the trace
	time  int64 // its alloc time
}

// liveAt returns the allocations of device dev alive after trace entry
// upto (-1: before the first). Allocations older than the trace come from
// the snapshot's blocks that the trace never mentions, and from addresses
// whose first trace event is a free.
func (s *Snapshot) liveAt(dev int, upto int) map[uint64]liveAlloc {
	trace := s.Traces[dev]
	type first struct {
		free bool
		size int64
	}
	seen := map[uint64]first{}
	for i := range trace {
		e := &trace[i]
		switch e.Action {
		case ActionAlloc, ActionFreeRequested, ActionFreeCompleted:
			if _, ok := seen[e.Addr]; !ok {
				seen[e.Addr] = first{free: e.Action != ActionAlloc, size: e.Size}
			}
		}
	}
	live := map[uint64]liveAlloc{}
	for i := range s.Segments {
		seg := &s.Segments[i]
		if seg.Device != int64(dev) {
			continue
		}
		for _, b := range seg.Blocks {
			if _, ok := seen[b.Address]; !ok && b.State != StateInactive {
				live[b.Address] = liveAlloc{addr: b.Address, size: b.Size, stack: b.Stack, index: -1}
			}
		}
	}
	for addr, f := range seen {
		if f.free {
			live[addr] = liveAlloc{addr: addr, size: f.size, stack: stackBeforeTrace, index: -1}
		}
	}
	for i := 0; i <= upto && i < len(trace); i++ {
		e := &trace[i]
		switch e.Action {
		case ActionAlloc:
			live[e.Addr] = liveAlloc{addr: e.Addr, size: e.Size, stack: e.Stack, index: i, time: e.TimeUS}
		case ActionFreeCompleted:
			delete(live, e.Addr)
		}
	}
	return live
}
