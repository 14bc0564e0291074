package estimate

// The predicted memory of a traced script in the terms of PyTorch's
// memory snapshot (torch.cuda.memory._snapshot()): the segments and
// blocks at the end of the trace and the allocator's history, with
// addresses made up from the model's segments. tracerun writes it as the
// pickle that torchmem snapshot and PyTorch's memory_viz open.

// Segments are laid out below this address (as CUDA's virtual addresses
// look), each below the one made before it: the driver's order, which
// the allocator model's choice among equal free blocks follows
// (allocator.go, newSegment).
const snapshotBase = 0x7f0000000000

// SnapshotFrame is one Python frame.
type SnapshotFrame struct {
	Filename string
	Line     int
	Name     string
}

// SnapshotBlock is a block of a segment at the end of the trace.
type SnapshotBlock struct {
	Address, Size, Requested int64
	Allocated                bool
	Frames                   []SnapshotFrame
}

// SnapshotSegment is one cudaMalloc'd segment, or the mapped pages of
// an expandable one that lie together (Expandable).
type SnapshotSegment struct {
	Address, Size int64
	Stream        int32 // the CUDA stream its blocks serve (0: the default one)
	Small         bool
	Expandable    bool
	Blocks        []SnapshotBlock
}

// SnapshotAction is one entry of device_traces: alloc, free_requested,
// free_completed, segment_alloc or segment_free (segment_map and
// segment_unmap with expandable segments).
type SnapshotAction struct {
	Action     string
	Addr, Size int64
	Stream     int32
	Frames     []SnapshotFrame
}

// TraceMemory is the snapshot's content.
type TraceMemory struct {
	Segments []SnapshotSegment
	Actions  []SnapshotAction
}

type snapSink struct {
	t      *Trace
	base   map[int]int64 // segment -> address
	next   int64         // the lowest address laid out so far
	top    int64         // where one that no longer fits below goes
	small  map[int]bool
	req    map[*block]int64 // what the program asked for each live block
	frames map[int][]SnapshotFrame
	acts   []SnapshotAction
}

func (s *snapSink) addr(b *block) int64 { return s.base[b.seg] + b.off }

// segment lays a segment out when it is made (a cudaMalloc'd one by its
// segment_alloc, an expandable one by its address space's reserve) and
// records the change.
func (s *snapSink) segment(e segEvent) {
	if e.action == "segment_alloc" || e.action == "reserve" {
		if s.next < e.size { // below zero (a hundred unbounded 1 TiB reserves): above the base instead
			s.base[e.seg] = s.top
			s.top += e.size
		} else {
			s.next -= e.size
			s.base[e.seg] = s.next
		}
		s.small[e.seg] = e.pool == 0
	}
	if e.action != "reserve" {
		s.acts = append(s.acts, SnapshotAction{Action: e.action, Addr: s.base[e.seg] + e.off, Size: e.size,
			Stream: e.stream})
	}
}

func (s *snapSink) stack(a int32) []SnapshotFrame {
	if a < 0 { // a cuBLAS workspace the replay adds
		return nil
	}
	sid := s.t.Allocs[a].Stack
	if f, ok := s.frames[sid]; ok {
		return f
	}
	var out []SnapshotFrame
	for _, fr := range s.t.Stacks[sid] {
		out = append(out, parseFrame(fr))
	}
	s.frames[sid] = out
	return out
}

// alloc and free record the size the program asked for, not the
// block's: PyTorch's trace entries carry the request (a 128-byte tensor
// is an alloc of 128 in a 512-byte block; H200 capture, torch 2.11).
func (s *snapSink) alloc(a int32, b *block, requested int64) {
	s.req[b] = requested
	s.acts = append(s.acts, SnapshotAction{Action: "alloc", Addr: s.addr(b), Size: requested, Stream: b.stream,
		Frames: s.stack(a)})
}

func (s *snapSink) free(a int32, b *block) {
	f := s.stack(a)
	n, ok := s.req[b]
	if !ok {
		n = b.size
	}
	delete(s.req, b)
	s.acts = append(s.acts,
		SnapshotAction{Action: "free_requested", Addr: s.addr(b), Size: n, Stream: b.stream, Frames: f},
		SnapshotAction{Action: "free_completed", Addr: s.addr(b), Size: n, Stream: b.stream, Frames: f})
}

// parseFrame splits "file:line:function" (the file may hold colons).
func parseFrame(s string) SnapshotFrame {
	var f SnapshotFrame
	i := lastColon(s)
	if i < 0 {
		return SnapshotFrame{Filename: s}
	}
	f.Name = s[i+1:]
	rest := s[:i]
	j := lastColon(rest)
	if j < 0 {
		f.Filename = rest
		return f
	}
	n := 0
	for _, c := range rest[j+1:] {
		if c < '0' || c > '9' {
			return SnapshotFrame{Filename: rest, Name: f.Name}
		}
		n = n*10 + int(c-'0')
	}
	f.Filename, f.Line = rest[:j], n
	return f
}

func lastColon(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ':' {
			return i
		}
	}
	return -1
}

// TraceSnapshot replays the trace (unbounded allocator) and returns the
// memory as a snapshot would show it at the end, with its history.
func TraceSnapshot(t *Trace, o TraceReplay) *TraceMemory {
	s := &snapSink{t: t, base: map[int]int64{}, next: snapshotBase, top: snapshotBase, small: map[int]bool{}, req: map[*block]int64{},
		frames: map[int][]SnapshotFrame{}}
	cats := t.categories()
	o.Limit = 0
	m, held, _, _ := t.replay(cats, o, -1, s)
	owner := map[*block]int32{}
	for a, b := range held {
		owner[b] = a
	}
	out := &TraceMemory{Actions: s.acts}
	for _, h := range m.alloc.segs {
		// a run of mapped blocks is a segment (PyTorch's snapshot
		// reports an expandable segment's mapped ranges so)
		var sg *SnapshotSegment
		for b := h; b != nil; b = b.next {
			if b.unmapped {
				sg = nil
				continue
			}
			if sg == nil {
				out.Segments = append(out.Segments, SnapshotSegment{Address: s.base[b.seg] + b.off,
					Stream: b.stream, Small: s.small[b.seg], Expandable: m.alloc.expandable})
				sg = &out.Segments[len(out.Segments)-1]
			}
			sb := SnapshotBlock{Address: s.base[b.seg] + b.off, Size: b.size}
			if a, ok := owner[b]; ok {
				sb.Allocated, sb.Requested, sb.Frames = true, t.Allocs[a].Bytes, s.stack(a)
			}
			sg.Size += b.size
			sg.Blocks = append(sg.Blocks, sb)
		}
	}
	return out
}
