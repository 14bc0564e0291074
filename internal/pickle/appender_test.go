package pickle

import (
	"bytes"
	"strings"
	"testing"
)

// takeHooks is keepHooks that also takes the items of lists whose first
// batch is only converted entries, and converts those lists in Finish.
type takeHooks struct {
	keepHooks
	taken  map[int64][]Value
	refuse bool // refuse a later batch of a taken list
}

func (h *takeHooks) Append(d *Decoder, list Value, items []Value, taken bool) bool {
	for _, it := range items {
		if it.Kind != KindExt && !taken {
			return false
		}
	}
	if taken && h.refuse {
		return false
	}
	h.taken[list.N] = append(h.taken[list.N], items...)
	return true
}

func (h *takeHooks) Finish(d *Decoder, v Value) (Value, error) {
	if _, ok := h.taken[v.N]; ok && v.Kind == KindList {
		if len(d.Items(v)) != 0 {
			return v, nil // the test fails on this: the decoder kept items
		}
		return Value{Kind: KindExt, N: -1}, nil
	}
	return h.keepHooks.Finish(d, v)
}

// TestAppenderTakesLists: the items of a list of converted entries go to
// the hooks, batch after batch (later batches whatever they hold), the
// decoder holds none of them and hands the list to Finish empty; generic
// containers among taken items are released. A list whose first batch is
// not only converted entries stays the decoder's. Hooks that refuse a later
// batch of a list they took make an error.
func TestAppenderTakesLists(t *testing.T) {
	var p pk
	memo := 0
	p.op(opProto, 4, opEmptyList, opMemoize, opMark) // the top list: memo 0
	memo++
	p.op(opEmptyList, opMemoize, opMark) // the taken list: memo 1
	memo++
	for i := range 3 {
		p.entry(i, &memo)
	}
	p.op(opAppends, opMark)
	p.entry(3, &memo)
	p.op(opEmptyList, opAppends)                       // a later batch with a generic list
	p.op(opEmptyList, opMark, opBinInt1, 7, opAppends) // a list of ints: not taken
	p.op(opAppends, opStop)
	h := &takeHooks{taken: map[int64][]Value{}}
	d := NewDecoder(bytes.NewReader(p.Bytes()), Options{Size: int64(p.Len()), Hooks: h})
	v, err := d.Decode()
	if err != nil {
		t.Fatal(err)
	}
	top := d.Items(v)
	if len(top) != 2 || top[0] != (Value{Kind: KindExt, N: -1}) || len(d.Items(top[1])) != 1 {
		t.Fatalf("top list %v", top)
	}
	var got []Value
	for _, items := range h.taken {
		got = items
	}
	if len(h.taken) != 1 || len(got) != 5 || got[3] != (Value{Kind: KindExt, N: 4}) || got[4].Kind != KindList {
		t.Fatalf("taken %v", h.taken)
	}
	if st := d.Stats(); st.Conts != 2 { // the top list and the list of ints
		t.Errorf("decoder holds %d containers, want 2: %+v", st.Conts, st)
	}

	h = &takeHooks{taken: map[int64][]Value{}, refuse: true}
	d = NewDecoder(bytes.NewReader(p.Bytes()), Options{Size: int64(p.Len()), Hooks: h})
	if _, err := d.Decode(); err == nil || !strings.Contains(err.Error(), "refused items of a list whose items they took") {
		t.Fatalf("refusing hooks: %v", err)
	}
}
