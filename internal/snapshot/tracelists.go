package snapshot

import "github.com/torchmem/torchmem/internal/pickle"

// traceList is a device's trace as the order of its entries in the
// builder's chunks: a range while the indices follow each other (always,
// in a snapshot as PyTorch writes it), every index after that.
type traceList struct {
	start, n int
	idx      []int // every index, once one did not follow the last
	// otherAt is how many entries came before the first item that was not
	// a trace entry (ignored, but it stops chunks being dropped), or -1.
	otherAt int
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
		b.tracesTaken = append(b.tracesTaken, traceList{otherAt: -1})
	}
	i, ok := b.takenLists[list.N]
	if !ok {
		return false
	}
	t := &b.tracesTaken[i]
	for _, it := range items {
		if tag, idx := handleOf(it); tag == tagTrace {
			t.add(idx)
		} else if t.otherAt < 0 {
			t.otherAt = t.n
		}
	}
	return true
}

var _ pickle.Appender = (*builder)(nil)
