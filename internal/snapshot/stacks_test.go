package snapshot

import (
	"slices"
	"testing"

	"github.com/torchmem/torchmem/internal/pickle"
)

func frameHandles(ids ...int) []pickle.Value {
	out := make([]pickle.Value, len(ids))
	for i, id := range ids {
		out[i] = handle(tagFrame, id)
	}
	return out
}

// TestInternStackHashTaken: a stack whose hash an earlier, different stack
// took (forced here; collisions are rare) still gets its own id, and
// the same one each time; a list that is not all frames is no stack.
func TestInternStackHashTaken(t *testing.T) {
	b := newBuilder()
	a, _ := b.internStack(frameHandles(1, 2, 3))
	other := frameHandles(4, 5)
	h, _ := frameHash(other)
	b.stackByHash[h] = a // pretend {4, 5} hashes like {1, 2, 3}
	x, ok := b.internStack(other)
	y, _ := b.internStack(frameHandles(4, 5))
	if !ok || x == a || x != y || !slices.Equal(b.snap.Stacks[x], []FrameID{4, 5}) {
		t.Fatalf("stacks %d %d %d: %v", a, x, y, b.snap.Stacks)
	}
	if again, _ := b.internStack(frameHandles(1, 2, 3)); again != a {
		t.Fatalf("stack {1,2,3} got %d then %d", a, again)
	}
	// Same length and outer frames as {1, 2, 3}: the cache's slot, not its stack.
	mid, _ := b.internStack(frameHandles(1, 9, 3))
	if mid == a || !slices.Equal(b.snap.Stacks[mid], []FrameID{1, 9, 3}) {
		t.Fatalf("{1,9,3} got stack %d: %v", mid, b.snap.Stacks)
	}
	if again, _ := b.internStack(frameHandles(1, 2, 3)); again != a {
		t.Fatalf("stack {1,2,3} got %d after {1,9,3}", again)
	}
	// Ints equal to a cached stack's handles are no stack.
	ints := frameHandles(1, 2, 3)
	ints[1] = pickle.Value{Kind: pickle.KindInt, N: ints[1].N}
	if _, ok := b.internStack(ints); ok {
		t.Fatal("a list with an int interned as a stack")
	}
	if _, ok := b.internStack(append(frameHandles(1), pickle.Value{Kind: pickle.KindInt})); ok {
		t.Fatal("a list with an int interned as a stack")
	}
	if _, ok := b.internStack(nil); ok {
		t.Fatal("an empty list interned as a stack")
	}
}

// TestTraceListOrder: a taken trace list keeps its entries' order as a
// range while the indices follow each other and as indices after that; an
// item that is no trace entry is left out.
func TestTraceListOrder(t *testing.T) {
	b := newBuilder()
	list := pickle.Value{Kind: pickle.KindList, N: 42}
	traces := func(idx ...int) []pickle.Value {
		out := make([]pickle.Value, len(idx))
		for i, x := range idx {
			out[i] = handle(tagTrace, x)
		}
		return out
	}
	if b.Append(nil, list, frameHandles(1), false) {
		t.Fatal("took a list of frames")
	}
	if !b.Append(nil, list, traces(5, 6, 7), false) || !b.Append(nil, list, append(traces(8), handle(tagFrame, 1)), true) ||
		!b.Append(nil, list, traces(3, 4), true) {
		t.Fatal("refused a trace list's items")
	}
	tl := b.tracesTaken[b.takenLists[list.N]]
	var got []int
	for k := range tl.n {
		got = append(got, tl.at(k))
	}
	if !slices.Equal(got, []int{5, 6, 7, 8, 3, 4}) {
		t.Fatalf("order %v", got)
	}
}
