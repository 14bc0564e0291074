package snapshot

// Level is the allocator's memory on one device after one trace entry.
// PyTorch records requested sizes in the trace (alloc and free entries
// carry the size the caller asked for, not the rounded block), so
// Allocated counts requested bytes; memory_allocated() would show the same
// blocks rounded up to 512 bytes.
type Level struct {
	Index     int   `json:"index"`             // trace entry index, -1 before the first
	TimeUS    int64 `json:"time_us,omitempty"` // 0 when the snapshot has no times
	Allocated int64 `json:"allocated_bytes"`   // blocks handed out, not yet free_completed
	Reserved  int64 `json:"reserved_bytes"`    // segments (cudaMalloc'd or mapped)
}

// endState returns the bytes requested by active blocks (pending frees
// included), in the trace's units, and reserved on a device at the moment
// of the snapshot.
func (s *Snapshot) endState(dev int64) (allocated, reserved int64) {
	for i := range s.Segments {
		seg := &s.Segments[i]
		if seg.Device != dev {
			continue
		}
		reserved += seg.TotalSize
		for _, b := range seg.Blocks {
			if b.State != StateInactive {
				allocated += b.Requested
			}
		}
	}
	return allocated, reserved
}

// delta is the change of allocated and reserved bytes one entry makes.
func delta(e *TraceEntry) (alloc, reserved int64) {
	switch e.Action {
	case ActionAlloc:
		return e.Size, 0
	case ActionFreeCompleted:
		return -e.Size, 0
	case ActionSegmentAlloc, ActionSegmentMap:
		return 0, e.Size
	case ActionSegmentFree, ActionSegmentUnmap:
		return 0, -e.Size
	}
	return 0, 0
}

// startLevel works back from the state at the snapshot through the trace:
// the trace is a ring buffer, so memory held before its first entry shows
// up only this way.
func (s *Snapshot) startLevel(dev int) (allocated, reserved int64) {
	allocated, reserved = s.endState(int64(dev))
	for i := range s.Traces[dev] {
		a, r := delta(&s.Traces[dev][i])
		allocated -= a
		reserved -= r
	}
	return max(allocated, 0), max(reserved, 0)
}

// Replay calls visit with the levels after each entry of device dev's
// trace, in order, and returns the level before the first entry.
func (s *Snapshot) Replay(dev int, visit func(Level, *TraceEntry)) Level {
	a, r := s.startLevel(dev)
	start := Level{Index: -1, Allocated: a, Reserved: r}
	if len(s.Traces[dev]) > 0 {
		start.TimeUS = s.Traces[dev][0].TimeUS
	}
	for i := range s.Traces[dev] {
		e := &s.Traces[dev][i]
		da, dr := delta(e)
		a += da
		r += dr
		visit(Level{Index: i, TimeUS: e.TimeUS, Allocated: a, Reserved: r}, e)
	}
	return start
}

// Peak returns the level with the most allocated bytes over device dev's
// trace (the first such entry), or the start level when no entry exceeds
// it: the rule the summary and the timeline use too.
func (s *Snapshot) Peak(dev int) Level {
	var peak Level
	found := false
	start := s.Replay(dev, func(l Level, _ *TraceEntry) {
		if !found || l.Allocated > peak.Allocated {
			peak, found = l, true
		}
	})
	if !found || start.Allocated >= peak.Allocated {
		return start
	}
	return peak
}
