package main

import "github.com/torchmem/torchmem/internal/snapshot"

type gen struct {
	p         *pickler
	s         *snapshot.Snapshot
	copies    int
	frameMemo map[snapshot.FrameID]int
	// future adds to every trace entry a nested dict no torch writes
	// today, {"future": {"kind": ..., "ids": [addr, size], "meta": {...}}},
	// to measure what keys the reader ignores cost.
	future bool
}

// The keys of each dict, in the order PyTorch writes them.
var (
	topKeys     = []string{"segments", "device_traces", "allocator_settings", "external_annotations"}
	frameKeys   = []string{"name", "filename", "line"}
	segmentKeys = []string{"device", "address", "total_size", "allocated_size", "active_size", "requested_size",
		"stream", "segment_type", "segment_pool_id", "is_expandable", "frames", "blocks"}
	blockKeys = []string{"address", "size", "requested_size", "state", "frames"}
	// entryKeys ends with the future dict's key, written only with -future;
	// an OOM entry has device_free where the others have addr.
	entryKeys      = []string{"action", "addr", "size", "stream", "time_us", "compile_context", "user_metadata", "frames", "future"}
	oomEntryKeys   = []string{"action", "device_free", "size", "stream", "time_us", "compile_context", "user_metadata", "frames", "future"}
	futureKeys     = []string{"kind", "ids", "meta"}
	annotationKeys = []string{"stage", "name", "device", "time_us"}
)

func (g *gen) top() {
	g.p.record(topKeys, func(i int) {
		switch i {
		case 0:
			g.p.list(len(g.s.Segments), func(j int) { g.segment(&g.s.Segments[j]) })
		case 1:
			g.p.list(len(g.s.Traces), func(d int) { g.trace(g.s.Traces[d]) })
		case 2:
			g.p.any(toAny(g.s.AllocatorSettings))
		case 3:
			g.annotations()
		}
	})
}

func toAny(m map[string]any) any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// frames writes a fresh list of memoized frame dicts, as PyTorch does.
func (g *gen) frames(id snapshot.StackID) {
	st := g.s.Stack(id)
	g.p.list(len(st), func(i int) {
		fid := st[i]
		if m, ok := g.frameMemo[fid]; ok {
			g.p.get(m)
			return
		}
		f := g.s.Frames[fid]
		memo := g.p.memo
		g.p.record(frameKeys, func(k int) {
			switch k {
			case 0:
				g.p.str(f.Name)
			case 1:
				g.p.str(f.Filename)
			case 2:
				g.p.int(f.Line)
			}
		})
		g.frameMemo[fid] = memo
	})
}

func (g *gen) segment(seg *snapshot.Segment) {
	req := seg.AllocatedSize
	if seg.RequestedSize != nil {
		req = *seg.RequestedSize
	}
	g.p.record(segmentKeys, func(k int) {
		switch k {
		case 0:
			g.p.int(seg.Device)
		case 1:
			g.p.int(int64(seg.Address))
		case 2:
			g.p.int(seg.TotalSize)
		case 3:
			g.p.int(seg.AllocatedSize)
		case 4:
			g.p.int(seg.ActiveSize)
		case 5:
			g.p.int(req)
		case 6:
			g.p.int(seg.Stream)
		case 7:
			g.p.str(seg.SegmentType)
		case 8:
			g.p.int(seg.PoolID[0])
			g.p.int(seg.PoolID[1])
			g.p.op(0x86)
			g.p.memoize()
		case 9:
			g.p.bool(seg.IsExpandable)
		case 10:
			g.frames(seg.Stack)
		case 11:
			g.p.list(len(seg.Blocks), func(j int) { g.block(&seg.Blocks[j]) })
		}
	})
}

func (g *gen) block(b *snapshot.Block) {
	g.p.record(blockKeys, func(k int) {
		switch k {
		case 0:
			g.p.int(int64(b.Address))
		case 1:
			g.p.int(b.Size)
		case 2:
			g.p.int(b.Requested)
		case 3:
			g.p.str(b.State.String())
		case 4:
			g.frames(b.Stack)
		}
	})
}

// copySpan is how far apart in time two copies of device trace t are laid.
func copySpan(t []snapshot.TraceEntry) int64 {
	if len(t) == 0 {
		return 0
	}
	return t[len(t)-1].TimeUS - t[0].TimeUS + 1000
}

// trace writes the device's entries copies times, shifting times so the
// copies follow each other.
func (g *gen) trace(t []snapshot.TraceEntry) {
	span := copySpan(t)
	g.p.list(len(t)*g.copies, func(i int) {
		e := t[i%len(t)]
		shift := int64(i/len(t)) * span
		g.entry(&e, shift)
	})
}

func (g *gen) entry(e *snapshot.TraceEntry, shift int64) {
	keys := entryKeys
	if e.Action == snapshot.ActionOOM {
		keys = oomEntryKeys
	}
	if !g.future {
		keys = keys[:len(keys)-1]
	}
	ctx := g.s.Texts[e.Compile]
	if ctx == "" {
		ctx = "N/A"
	}
	g.p.record(keys, func(k int) {
		switch k {
		case 0:
			g.p.str(e.Action.String())
		case 1:
			if e.Action == snapshot.ActionOOM {
				g.p.int(e.DeviceFree)
			} else {
				g.p.int(int64(e.Addr))
			}
		case 2:
			g.p.int(e.Size)
		case 3:
			g.p.int(g.s.Streams[e.Stream])
		case 4:
			g.p.int(e.TimeUS + shift)
		case 5:
			g.p.str(ctx)
		case 6:
			g.p.str("")
		case 7:
			g.frames(e.Stack)
		case 8:
			g.futureDict(e)
		}
	})
}

func (g *gen) futureDict(e *snapshot.TraceEntry) {
	g.p.record(futureKeys, func(k int) {
		switch k {
		case 0:
			g.p.str(e.Action.String())
		case 1:
			g.p.list(2, func(i int) { g.p.int([]int64{int64(e.Addr), e.Size}[i]) })
		case 2:
			g.p.dict(1, func(int) { g.p.str("step"); g.p.int(e.TimeUS) })
		}
	})
}

func (g *gen) annotations() {
	a := g.s.Annotations
	var span int64
	if len(g.s.Traces) > 0 {
		span = copySpan(g.s.Traces[0])
	}
	g.p.list(len(a)*g.copies, func(i int) {
		x := a[i%len(a)]
		g.p.record(annotationKeys, func(k int) {
			switch k {
			case 0:
				g.p.str(x.Stage)
			case 1:
				g.p.str(x.Name)
			case 2:
				g.p.int(x.Device)
			case 3:
				g.p.int(x.TimeUS + int64(i/len(a))*span)
			}
		})
	})
}
