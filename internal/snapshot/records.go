package snapshot

import (
	"github.com/torchmem/torchmem/internal/pickle"
)

func (b *builder) traceEntry(d *pickle.Decoder, items []pickle.Value) (pickle.Value, error) {
	var e TraceEntry
	for i := 0; i+1 < len(items); i += 2 {
		val := items[i+1]
		switch b.keyOf(d, items[i]) {
		case kAction:
			e.Action = b.actionOf(d, val)
		case kAddr:
			n, _ := intOf(val)
			e.Addr = uint64(n)
		case kSize:
			e.Size, _ = intOf(val)
		case kStream:
			n, _ := intOf(val)
			e.Stream = b.stream(n)
		case kTimeUS:
			e.TimeUS, e.HasTime = intOf(val)
			b.sawTime = b.sawTime || e.HasTime
		case kDeviceFree:
			e.DeviceFree, _ = intOf(val)
		case kFrames:
			e.Stack = stackOf(val)
		case kCompileContext:
			e.Compile = b.text(d, val)
		}
	}
	return handle(tagTrace, b.addTrace(e)), nil
}

func parseState(s string) BlockState {
	switch s {
	case "active_allocated":
		return StateActiveAllocated
	case "active_pending_free", "active_awaiting_free":
		return StateActivePendingFree
	case "inactive":
		return StateInactive
	}
	return StateUnknown
}

func (b *builder) block(d *pickle.Decoder, items []pickle.Value) (pickle.Value, error) {
	var r blockRec
	for i := 0; i+1 < len(items); i += 2 {
		val := items[i+1]
		switch b.keyOf(d, items[i]) {
		case kAddress:
			n, ok := intOf(val)
			r.Address, r.hasAddress = uint64(n), ok
		case kSize:
			r.Size, _ = intOf(val)
		case kRequestedSize:
			r.Requested, r.hasRequested = intOf(val)
		case kState:
			s, _ := d.Str(val)
			r.State = parseState(s)
		case kFrames:
			r.Stack, r.hasFrames = stackOf(val), true
			b.sawFrame = true
		case kHistory:
			r.hist = b.historyList(val)
			b.sawHist = true
		}
	}
	b.blocks = append(b.blocks, r)
	return handle(tagBlock, len(b.blocks)-1), nil
}

func (b *builder) historyList(v pickle.Value) []int {
	if v.Kind != pickle.KindList {
		return nil
	}
	var out []int
	for _, it := range b.dec.Items(v) {
		if tag, idx := handleOf(it); tag == tagHistory {
			out = append(out, idx)
		}
	}
	return out
}

func (b *builder) historyEntry(d *pickle.Decoder, items []pickle.Value) pickle.Value {
	var h history
	for i := 0; i+1 < len(items); i += 2 {
		switch b.keyOf(d, items[i]) {
		case kRealSize:
			h.realSize, _ = intOf(items[i+1])
		case kFrames:
			h.stack = stackOf(items[i+1])
		}
	}
	b.hist = append(b.hist, h)
	return handle(tagHistory, len(b.hist)-1)
}

func (b *builder) segment(d *pickle.Decoder, items []pickle.Value) (pickle.Value, error) {
	var s Segment
	var blocks pickle.Value
	for i := 0; i+1 < len(items); i += 2 {
		val := items[i+1]
		switch b.keyOf(d, items[i]) {
		case kDevice:
			s.Device, _ = intOf(val)
		case kAddress:
			n, _ := intOf(val)
			s.Address = uint64(n)
		case kTotalSize:
			s.TotalSize, _ = intOf(val)
		case kAllocatedSize:
			s.AllocatedSize, _ = intOf(val)
		case kActiveSize:
			s.ActiveSize, _ = intOf(val)
		case kRequestedSize:
			if n, ok := intOf(val); ok {
				s.RequestedSize = &n
			}
		case kStream:
			s.Stream, _ = intOf(val)
		case kSegmentType:
			s.SegmentType, _ = d.Str(val)
		case kPoolID:
			s.PoolID = b.poolID(val)
		case kIsExpandable:
			s.IsExpandable = val.Kind == pickle.KindBool && val.N != 0
		case kFrames:
			s.Stack = stackOf(val)
		case kBlocks:
			blocks = val
		}
	}
	if blocks.Kind != pickle.KindList {
		return pickle.Value{}, typeErr("segment 'blocks'", blocks)
	}
	s.Blocks = b.segmentBlocks(s.Address, blocks)
	b.segments = append(b.segments, s)
	return handle(tagSegment, len(b.segments)-1), nil
}

func (b *builder) poolID(v pickle.Value) [2]int64 {
	var p [2]int64
	if v.Kind == pickle.KindTuple || v.Kind == pickle.KindList {
		for i := 0; i < 2 && i < len(b.dec.Items(v)); i++ {
			p[i], _ = intOf(b.dec.Items(v)[i])
		}
	}
	return p
}

// segmentBlocks resolves block records, filling what torch <= 2.0 only
// kept in the history (requested size, stack) and 1.13's missing
// addresses, the way PyTorch's _memory_viz._block_extra does.
func (b *builder) segmentBlocks(base uint64, list pickle.Value) []Block {
	out := make([]Block, 0, len(b.dec.Items(list)))
	off := base
	for _, it := range b.dec.Items(list) {
		tag, idx := handleOf(it)
		if tag != tagBlock {
			continue
		}
		r := b.blocks[idx]
		blk := r.Block
		if !r.hasAddress {
			blk.Address = off
		}
		switch {
		case r.hasFrames:
			if !r.hasRequested {
				blk.Requested = blk.Size
			}
		case len(r.hist) > 0:
			h := b.hist[r.hist[0]]
			blk.Requested, blk.Stack = h.realSize, h.stack
		case !r.hasRequested:
			blk.Requested = blk.Size
		}
		off += uint64(blk.Size)
		out = append(out, blk)
	}
	return out
}

func (b *builder) stream(id int64) uint32 {
	for i, s := range b.snap.Streams {
		if s == id {
			return uint32(i)
		}
	}
	b.snap.Streams = append(b.snap.Streams, id)
	return uint32(len(b.snap.Streams) - 1)
}
