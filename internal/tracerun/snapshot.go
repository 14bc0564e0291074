package tracerun

import (
	"fmt"
	"os"

	"github.com/torchmem/torchmem/internal/estimate"
	"github.com/torchmem/torchmem/internal/pickle"
)

// WriteSnapshot writes the trace's predicted memory as a PyTorch memory
// snapshot pickle (the dict torch.cuda.memory._snapshot() returns:
// segments with their blocks at the end of the trace, device_traces with
// every segment_alloc or segment_map, alloc, free_requested and
// free_completed, and the segments given back or unmapped), which
// torchmem snapshot and PyTorch's memory_viz open.
func WriteSnapshot(path string, t *estimate.Trace, o estimate.TraceReplay) error {
	m := estimate.TraceSnapshot(t, o)
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--snapshot: %w", err)
	}
	w := pickle.NewWriter(f)
	w.Dict()
	w.Str("segments")
	w.List()
	for _, s := range m.Segments {
		writeSegment(w, s)
	}
	w.EndList()
	w.Str("device_traces")
	w.List()
	w.List()
	for i, a := range m.Actions {
		w.Dict()
		w.Str("action")
		w.Str(a.Action)
		w.Str("addr")
		w.Int(a.Addr)
		w.Str("size")
		w.Int(a.Size)
		w.Str("stream")
		w.Int(int64(a.Stream))
		w.Str("time_us")
		w.Int(int64(i)) // event order: the trace has no clock
		w.Str("frames")
		writeFrames(w, a.Frames)
		w.EndDict()
	}
	w.EndList()
	w.EndList()
	w.EndDict()
	err = w.Close()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("--snapshot %s: %w", path, err)
	}
	return nil
}

func writeSegment(w *pickle.Writer, s estimate.SnapshotSegment) {
	var allocated, requested int64
	for _, b := range s.Blocks {
		if b.Allocated {
			allocated += b.Size
			requested += b.Requested
		}
	}
	kind := "large"
	if s.Small {
		kind = "small"
	}
	w.Dict()
	for _, kv := range []struct {
		k string
		v int64
	}{{"device", 0}, {"address", s.Address}, {"total_size", s.Size}, {"allocated_size", allocated},
		{"active_size", allocated}, {"requested_size", requested}, {"stream", int64(s.Stream)}} {
		w.Str(kv.k)
		w.Int(kv.v)
	}
	w.Str("segment_type")
	w.Str(kind)
	w.Str("is_expandable")
	w.Bool(s.Expandable)
	w.Str("blocks")
	w.List()
	for _, b := range s.Blocks {
		w.Dict()
		w.Str("address")
		w.Int(b.Address)
		w.Str("size")
		w.Int(b.Size)
		w.Str("requested_size")
		w.Int(b.Requested)
		w.Str("state")
		if b.Allocated {
			w.Str("active_allocated")
		} else {
			w.Str("inactive")
		}
		w.Str("frames")
		writeFrames(w, b.Frames)
		w.EndDict()
	}
	w.EndList()
	w.EndDict()
}

func writeFrames(w *pickle.Writer, fs []estimate.SnapshotFrame) {
	w.List()
	for _, f := range fs {
		w.Dict()
		w.Str("filename")
		w.Str(f.Filename)
		w.Str("line")
		w.Int(int64(f.Line))
		w.Str("name")
		w.Str(f.Name)
		w.EndDict()
	}
	w.EndList()
}
