package pickle

import (
	"bytes"
	"strings"
	"testing"
)

// pk writes pickle opcodes for tests.
type pk struct{ bytes.Buffer }

func (p *pk) op(b ...byte) *pk { p.Write(b); return p }
func (p *pk) str(s string) *pk { p.op(opShortBinUnicod, byte(len(s))); p.WriteString(s); return p }
func (p *pk) get(i int) *pk    { return p.op(opLongBinGet, byte(i), byte(i>>8), byte(i>>16), byte(i>>24)) }

// keepHooks converts dicts whose first key is "keep" to a KindExt handle,
// ignoring their other keys, the way the snapshot builder treats a trace
// entry's unknown nested dict.
type keepHooks struct{ n int }

func (h *keepHooks) Finish(d *Decoder, v Value) (Value, error) {
	items := d.Items(v)
	if v.Kind == KindDict && len(items) > 0 {
		if s, _ := d.Str(items[0]); s == "keep" {
			h.n++
			return Value{Kind: KindExt, N: int64(h.n)}, nil
		}
	}
	return v, nil
}

// entry writes {"keep": i, "extra": {"x": [1, 2], "y": {}}} with every
// container memoized; it returns the memo index of the "extra" dict.
func (p *pk) entry(i int, memo *int) int {
	p.op(opEmptyDict, opMemoize, opMark).str("keep").op(opBinInt1, byte(i))
	p.str("extra").op(opEmptyDict, opMemoize)
	extra := *memo + 1
	*memo += 2
	p.op(opMark).str("x").op(opEmptyList, opMemoize, opMark, opBinInt1, 1, opBinInt1, 2, opAppends)
	p.str("y").op(opEmptyDict, opMemoize, opSetItems, opSetItems)
	*memo += 2
	return extra
}

// The children of a converted container that the hooks left generic (an
// unknown nested dict) are released at once: after n entries the decoder
// holds n converted handles, not 3n dicts and lists and their items; a
// later BINGET of a released dict reads as KindDropped, and so does a
// reference taken before its parent was converted.
func TestReleaseUnconverted(t *testing.T) {
	const n = 20000
	var p pk
	memo := 0
	p.op(opProto, 4, opEmptyList, opMemoize)
	memo++
	var extra int
	for i := 0; i < n; i += 100 {
		p.op(opMark)
		for j := i; j < i+100; j++ {
			extra = p.entry(j, &memo)
		}
		p.op(opAppends)
	}
	p.get(extra).op(opAppend) // after its parent was converted
	p.op(opMark)
	extra = p.entry(1, &memo)
	p.get(extra).op(opAppends, opStop) // taken before: the same batch converts the parent

	h := &keepHooks{}
	d := NewDecoder(bytes.NewReader(p.Bytes()), Options{Size: int64(p.Len()), Hooks: h})
	v, err := d.Decode()
	if err != nil {
		t.Fatal(err)
	}
	items := d.Items(v)
	if len(items) != n+3 || h.n != n+1 {
		t.Fatalf("%d items, %d converted", len(items), h.n)
	}
	for _, i := range []int{n, n + 2} {
		if items[i].Kind != KindDropped {
			t.Errorf("item %d is a %s, want a dropped value", i, items[i].Kind)
		}
	}
	st := d.Stats()
	if st.Conts > 8 || st.Items != n+3 {
		t.Errorf("holding %d containers and %d items after decoding, want the list alone (%+v)", st.Conts, st.Items, st)
	}
	if limit := st.Memo + st.Strings + n + 100*20; st.PeakLive > limit {
		t.Errorf("peak %d live values, want at most %d (%+v)", st.PeakLive, limit, st)
	}
	if x, err := d.ToAny(items[n], 4); err != nil || x != nil {
		t.Errorf("ToAny of a dropped value: %v, %v", x, err)
	}

	// Without hooks nothing is released: the decoder keeps every
	// container, or, as here, stops at the live-value budget.
	d = NewDecoder(bytes.NewReader(p.Bytes()), Options{Size: int64(p.Len())})
	_, err = d.Decode()
	if st := d.Stats(); err == nil && st.Conts < 3*n || err != nil && !strings.Contains(err.Error(), "decoded values") {
		t.Errorf("without hooks: %v, %+v", err, st)
	}
}

// A list of millions of empty lists (2 bytes each, about 80 bytes of
// decoder state each) is refused once it holds more values than the
// budget for the bytes read, not decoded into gigabytes.
func TestLiveBudget(t *testing.T) {
	for name, body := range map[string][]byte{
		"empty lists appended": bytes.Repeat([]byte{opEmptyList, opAppend}, 2_000_000),
		"memoized, never used": bytes.Repeat([]byte{opEmptyList, opMemoize, opPop}, 1_500_000),
	} {
		b := append(append([]byte{opProto, 4, opEmptyList}, body...), opStop)
		for _, known := range []bool{true, false} {
			d, _, err := decodeBytes(t, b, known)
			if err == nil || !strings.Contains(err.Error(), "decoded values after") || !strings.Contains(err.Error(), "pickle offset") {
				t.Errorf("%s (size known %v): %v", name, known, err)
				continue
			}
			if st := d.Stats(); int64(st.PeakLive) > Budget(int64(len(b)))+2*budgetEvery {
				t.Errorf("%s: peak %d live values, budget %d", name, st.PeakLive, Budget(int64(len(b))))
			}
		}
	}
}
