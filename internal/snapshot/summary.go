package snapshot

import "sort"

// PoolCount is the number and size of segments of one kind.
type PoolCount struct {
	Segments int   `json:"segments"`
	Bytes    int64 `json:"bytes"`
}

// DeviceSummary holds one device's figures at the moment of the snapshot,
// all computed from the segments and blocks.
type DeviceSummary struct {
	Device    int64 `json:"device"`
	Segments  int   `json:"segments"`
	Reserved  int64 `json:"reserved_bytes"`  // sum of segment total_size
	Allocated int64 `json:"allocated_bytes"` // active_allocated block sizes
	Active    int64 `json:"active_bytes"`    // allocated + active_pending_free
	Requested int64 `json:"requested_bytes"` // what callers asked for in active_allocated blocks
	// FreeInternal is rounding inside allocated blocks (size - requested);
	// FreeExternal is every byte of reserved memory not in an allocated
	// block: PyTorch's "(X% internal)" split.
	FreeInternal     int64                `json:"free_internal_bytes"`
	FreeExternal     int64                `json:"free_external_bytes"`
	LargestFreeBlock int64                `json:"largest_free_block_bytes"`
	Blocks           map[string]int       `json:"blocks_by_state"`
	Pools            map[string]PoolCount `json:"segments_by_pool"`
	Expandable       int                  `json:"expandable_segments"`
}

// OOMEvent is an 'oom' trace entry.
type OOMEvent struct {
	Index      int   `json:"index"`
	TimeUS     int64 `json:"time_us,omitempty"`
	Requested  int64 `json:"requested_bytes"`
	DeviceFree int64 `json:"device_free_bytes"`
}

// TraceSummary describes one device's allocation trace.
type TraceSummary struct {
	Device       int            `json:"device"`
	Entries      int            `json:"entries"`
	Actions      map[string]int `json:"actions"`
	HasTime      bool           `json:"has_time"`
	FirstUS      int64          `json:"first_time_us,omitempty"`
	LastUS       int64          `json:"last_time_us,omitempty"`
	OOMs         []OOMEvent     `json:"ooms"`
	Start        Level          `json:"start"`
	PeakAlloc    Level          `json:"peak_allocated"`
	PeakReserved Level          `json:"peak_reserved"`
}

// Summary is what `torchmem snapshot summary` reports.
type Summary struct {
	Format            string          `json:"format"`
	Devices           []DeviceSummary `json:"devices"`
	Traces            []TraceSummary  `json:"traces"`
	AllocatorSettings map[string]any  `json:"allocator_settings,omitempty"`
	Annotations       int             `json:"external_annotations"`
	// MemoryVizStats is PyTorch's own `_memory_viz stats` text, verbatim.
	MemoryVizStats string `json:"memory_viz_stats"`
}

// Summarize computes the summary of s.
func Summarize(s *Snapshot) *Summary {
	sum := &Summary{Format: s.Format, Devices: deviceSummaries(s), AllocatorSettings: s.AllocatorSettings,
		Annotations: len(s.Annotations), MemoryVizStats: MemoryVizStats(s)}
	for dev := range s.Traces {
		if len(s.Traces[dev]) > 0 {
			sum.Traces = append(sum.Traces, s.traceSummary(dev))
		}
	}
	return sum
}

// deviceSummaries returns the figures of each device with segments, by
// device number: the part of Summarize that needs no trace replay, for
// callers that show only it (diff, the HTML page).
func deviceSummaries(s *Snapshot) []DeviceSummary {
	byDev := map[int64]*DeviceSummary{}
	for i := range s.Segments {
		seg := &s.Segments[i]
		d := byDev[seg.Device]
		if d == nil {
			d = &DeviceSummary{Device: seg.Device, Blocks: map[string]int{}, Pools: map[string]PoolCount{}}
			byDev[seg.Device] = d
		}
		d.addSegment(seg)
	}
	var out []DeviceSummary
	for _, d := range byDev {
		out = append(out, *d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Device < out[j].Device })
	return out
}

func (d *DeviceSummary) addSegment(seg *Segment) {
	d.Segments++
	d.Reserved += seg.TotalSize
	pool := seg.SegmentType
	if pool == "" {
		pool = "unknown"
	}
	if seg.PoolID != [2]int64{} {
		pool += " (private pool)"
	}
	pc := d.Pools[pool]
	pc.Segments++
	pc.Bytes += seg.TotalSize
	d.Pools[pool] = pc
	if seg.IsExpandable {
		d.Expandable++
	}
	for _, b := range seg.Blocks {
		d.Blocks[b.State.String()]++
		switch b.State {
		case StateActiveAllocated:
			d.Allocated += b.Size
			d.Active += b.Size
			d.Requested += b.Requested
			d.FreeInternal += b.Size - b.Requested
		case StateActivePendingFree:
			d.Active += b.Size
			d.FreeExternal += b.Size
		default:
			d.FreeExternal += b.Size
			d.LargestFreeBlock = max(d.LargestFreeBlock, b.Size)
		}
	}
}

func (s *Snapshot) traceSummary(dev int) TraceSummary {
	t := TraceSummary{Device: dev, Entries: len(s.Traces[dev]), Actions: map[string]int{}, OOMs: []OOMEvent{}}
	var peakA, peakR Level
	first := true
	var actions [len(actionNames)]int // counted by number: a map update per entry cost more than the rest
	t.Start = s.Replay(dev, func(l Level, e *TraceEntry) {
		actions[e.Action]++
		if e.HasTime {
			if !t.HasTime {
				t.FirstUS = e.TimeUS
			}
			t.HasTime, t.LastUS = true, e.TimeUS
		}
		if e.Action == ActionOOM {
			t.OOMs = append(t.OOMs, OOMEvent{Index: l.Index, TimeUS: e.TimeUS, Requested: e.Size, DeviceFree: e.DeviceFree})
		}
		if first || l.Allocated > peakA.Allocated {
			peakA = l
		}
		if first || l.Reserved > peakR.Reserved {
			peakR = l
		}
		first = false
	})
	if t.Start.Allocated >= peakA.Allocated {
		peakA = t.Start
	}
	if t.Start.Reserved >= peakR.Reserved {
		peakR = t.Start
	}
	t.PeakAlloc, t.PeakReserved = peakA, peakR
	for a, n := range actions {
		if n > 0 {
			t.Actions[Action(a).String()] = n
		}
	}
	return t
}
