package snapshot

import "github.com/torchmem/torchmem/internal/pickle"

// traceList is a device's trace as the order of its entries in the
// builder's trace: a range while the indices follow each other (always, in
// a snapshot as PyTorch writes it), every index after that.
type traceList struct {
	start, n int
	idx      []int // every index, once one did not follow the last
}

func (t *traceList) add(i int) {
	if t.idx == nil && (t.n == 0 || i == t.start+t.n) {
		if t.n == 0 {
			t.start = i
		}
		t.n++
		return
	}
	if t.idx == nil {
		t.idx = make([]int, t.n, 2*t.n+1)
		for k := range t.idx {
			t.idx[k] = t.start + k
		}
	}
	t.idx = append(t.idx, i)
	t.n++
}

// at returns the index of entry k.
func (t *traceList) at(k int) int {
	if t.idx != nil {
		return t.idx[k]
	}
	return t.start + k
}

// Append implements pickle.Appender: the builder keeps the order of a list
// whose first items are trace entries (a device_traces list) itself, so
// the decoder does not hold a handle per entry in a list it grows by
// copying: 16 bytes per entry, twice over while it doubles.
func (b *builder) Append(d *pickle.Decoder, list pickle.Value, items []pickle.Value, taken bool) bool {
	if !taken {
		for _, it := range items {
			if tag, _ := handleOf(it); tag != tagTrace {
				return false
			}
		}
		b.takenLists[list.N] = len(b.tracesTaken)
		b.tracesTaken = append(b.tracesTaken, traceList{})
	}
	i, ok := b.takenLists[list.N]
	if !ok {
		return false
	}
	t := &b.tracesTaken[i]
	for _, it := range items {
		if tag, idx := handleOf(it); tag == tagTrace {
			t.add(idx) // anything else is ignored, as in a list not taken
		}
	}
	return true
}

var _ pickle.Appender = (*builder)(nil)

// traceOf returns the entries t names: a part of b.traces when they are a
// range of it (capped, so appending to one device's trace never writes
// over the next one's), else a copy.
func (b *builder) traceOf(t *traceList) []TraceEntry {
	if t.idx == nil {
		return b.traces[t.start : t.start+t.n : t.start+t.n]
	}
	out := make([]TraceEntry, len(t.idx))
	for k, i := range t.idx {
		out[k] = b.traces[i]
	}
	return out
}

// The trace is one slice, grown at most a few times: once traceFirst
// entries are in, its capacity comes from the input bytes they took and
// what is left of a plain file (15% more, and no fewer than 48 bytes per
// entry, so a hostile file cannot ask for more than about its own size);
// without a size, or past the estimate, it doubles. The old way, 32k-entry
// chunks copied out at the end, touched every entry's memory twice.
const (
	traceFirst       = 1 << 15
	traceMinEntryLen = 48
)

func (b *builder) addTrace(e TraceEntry) int {
	if len(b.traces) == cap(b.traces) {
		b.growTraces()
	}
	b.traces = append(b.traces, e)
	return len(b.traces) - 1
}

func (b *builder) growTraces() {
	n := len(b.traces)
	off := b.dec.Offset()
	if n == 0 {
		b.traceStart = off
		b.traces = make([]TraceEntry, 0, traceFirst)
		return
	}
	want := 2 * n
	if b.size > off && off > b.traceStart {
		perEntry := max(float64(off-b.traceStart)/float64(n), traceMinEntryLen)
		if est := n + int(float64(b.size-off)/perEntry*1.15) + 1024; est >= n+n/4 {
			want = est
		}
	}
	grown := make([]TraceEntry, n, want)
	copy(grown, b.traces)
	b.traces = grown
}
