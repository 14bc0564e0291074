// Package snapshot reads PyTorch CUDA memory snapshots
// (torch.cuda.memory._dump_snapshot, every format since torch 1.13) into
// typed structs without running any pickle code, and analyses them:
// PyTorch's own segment summary, per-device figures, the sites holding
// memory, the timeline replayed from the trace, leaks and differences.
//
// A 2.x snapshot looks like (abridged):
//
//	{'segments': [{'device': 0, 'address': 1397..., 'total_size': 2097152,
//	   'allocated_size': ..., 'stream': 0, 'segment_type': 'small',
//	   'blocks': [{'address': ..., 'size': 512, 'requested_size': 4,
//	               'state': 'active_allocated', 'frames': [{'name': 'forward',
//	               'filename': '.../linear.py', 'line': 134}, ...]}]}],
//	 'device_traces': [[{'action': 'alloc', 'addr': ..., 'size': 512,
//	   'stream': 0, 'time_us': 1795989445164203, 'frames': [...]}]],
//	 'allocator_settings': {...}, 'external_annotations': [...]}
//
// torch 1.13 wrote a bare list of segments whose blocks carry 'history'
// (addr, real_size, frames) instead of frames and requested_size.
package snapshot

// FrameID indexes Snapshot.Frames; StackID indexes Snapshot.Stacks.
type (
	FrameID uint32
	StackID uint32
)

// Frame is one stack frame as the snapshot recorded it. C++ frames have
// line 0 and a file like "??" or "CUDACachingAllocator.cpp".
type Frame struct {
	Name     string `json:"name"`
	Filename string `json:"filename"`
	Line     int64  `json:"line"`
}

// BlockState is the allocator's state of a block.
type BlockState uint8

// Block states. PyTorch's type hints spell the pending state
// "active_awaiting_free"; snapshots write "active_pending_free".
const (
	StateUnknown BlockState = iota
	StateActiveAllocated
	StateActivePendingFree
	StateInactive
)

// String is the state as PyTorch spells it.
func (s BlockState) String() string {
	return [...]string{"unknown", "active_allocated", "active_pending_free", "inactive"}[s]
}

// Block is one allocator block inside a segment.
type Block struct {
	Address uint64 `json:"address"`
	Size    int64  `json:"size"`
	// Requested is what the caller asked for (requested_size, or the
	// history's real_size in torch <= 2.0); Size minus Requested is
	// internal fragmentation (rounding).
	Requested int64      `json:"requested_size"`
	State     BlockState `json:"-"`
	Stack     StackID    `json:"-"`
}

// Segment is one cudaMalloc'd (or expandable) region.
type Segment struct {
	Device        int64    `json:"device"`
	Address       uint64   `json:"address"`
	TotalSize     int64    `json:"total_size"`
	AllocatedSize int64    `json:"allocated_size"`
	ActiveSize    int64    `json:"active_size"`
	RequestedSize *int64   `json:"requested_size,omitempty"`
	Stream        int64    `json:"stream"`
	SegmentType   string   `json:"segment_type"` // "large" or "small"
	PoolID        [2]int64 `json:"segment_pool_id"`
	IsExpandable  bool     `json:"is_expandable"`
	Stack         StackID  `json:"-"`
	Blocks        []Block  `json:"-"`
}

// Action is the kind of a trace entry.
type Action uint8

// Trace actions as PyTorch writes them.
const (
	ActionUnknown Action = iota
	ActionAlloc
	ActionFreeRequested
	ActionFreeCompleted
	ActionSegmentAlloc
	ActionSegmentFree
	ActionSegmentMap
	ActionSegmentUnmap
	ActionSnapshot
	ActionOOM
)

var actionNames = [...]string{"unknown", "alloc", "free_requested", "free_completed",
	"segment_alloc", "segment_free", "segment_map", "segment_unmap", "snapshot", "oom"}

// String is the action as PyTorch spells it.
func (a Action) String() string { return actionNames[a] }

func parseAction(s string) Action {
	for i, n := range actionNames {
		if n == s {
			return Action(i)
		}
	}
	return ActionUnknown
}

// TraceEntry is one event of a device's allocation trace.
type TraceEntry struct {
	Addr uint64
	Size int64
	// TimeUS is microseconds since the epoch; HasTime is false for torch
	// 2.0/2.1 snapshots that did not record times.
	TimeUS     int64
	DeviceFree int64 // oom entries: free device memory PyTorch saw
	Stack      StackID
	Compile    uint32 // index into Snapshot.Texts ("" = none)
	Stream     uint32 // index into Snapshot.Streams (0 = stream 0)
	Action     Action
	HasTime    bool
}

// Annotation is one external_annotations entry (record_function scopes).
type Annotation struct {
	Stage  string `json:"stage"` // START or END
	Name   string `json:"name"`
	Device int64  `json:"device"`
	TimeUS int64  `json:"time_us"`
}

// Snapshot is a decoded memory snapshot.
type Snapshot struct {
	// Format names the generation detected: "1.13" (bare segment list),
	// "2.0" (block history, no frames on blocks), "2.1" (frames on blocks,
	// no times) or "2.2+" (time_us on trace entries).
	Format            string
	Segments          []Segment
	Traces            [][]TraceEntry // by device index
	AllocatorSettings map[string]any
	Annotations       []Annotation
	Frames            []Frame
	Stacks            [][]FrameID // Stacks[0] is the empty stack
	Texts             []string    // Texts[0] is ""
	Streams           []int64     // stream ids of trace entries; Streams[0] is 0
}

// Stack returns the frames of id, innermost first.
func (s *Snapshot) Stack(id StackID) []FrameID {
	if int(id) >= len(s.Stacks) {
		return nil
	}
	return s.Stacks[id]
}
