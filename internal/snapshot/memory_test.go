package snapshot

import (
	"bytes"
	"testing"

	"github.com/torchmem/torchmem/internal/pickle"
)

// futurePickle writes, the way CPython's pickler does (protocol 4, every
// container and string memoized, keys fetched from the memo, batches of
// 1000), a snapshot of n trace entries that each carry an unknown nested
// dict, the shape a newer PyTorch could add.
func futurePickle(n int) []byte {
	var b bytes.Buffer
	memo := 0
	put := func() int { b.WriteByte(0x94); memo++; return memo - 1 }
	keys := map[string]int{}
	str := func(s string) {
		if i, ok := keys[s]; ok {
			b.Write([]byte{'j', byte(i), byte(i >> 8), byte(i >> 16), byte(i >> 24)})
			return
		}
		b.Write([]byte{0x8c, byte(len(s))})
		b.WriteString(s)
		keys[s] = put()
	}
	i32 := func(v int) { b.Write([]byte{'J', byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)}) }
	b.Write([]byte{0x80, 4, '}'})
	put()
	b.WriteByte('(')
	str("segments")
	b.WriteByte(']')
	put()
	str("device_traces")
	b.WriteByte(']')
	put()
	b.Write([]byte{']'})
	put()
	for i := 0; i < n; i += 1000 {
		b.WriteByte('(')
		for j := i; j < min(i+1000, n); j++ {
			b.WriteByte('}')
			put()
			b.WriteByte('(')
			str("action")
			str("alloc")
			str("addr")
			i32(j * 512)
			str("size")
			i32(512)
			str("stream")
			i32(0)
			str("time_us")
			i32(j)
			str("frames")
			b.WriteByte(']')
			put()
			str("future")
			b.WriteByte('}')
			put()
			b.WriteByte('(')
			str("ids")
			b.WriteByte(']')
			put()
			b.WriteByte('(')
			i32(j)
			i32(j + 1)
			b.WriteByte('e')
			str("meta")
			b.WriteByte('}')
			put()
			str("a")
			i32(1)
			b.Write([]byte{'s', 'u', 'u'})
		}
		b.WriteByte('e')
	}
	b.Write([]byte{'a', 'u', '.'})
	return b.Bytes()
}

// Trace entries' unknown nested dicts are released as each entry is
// converted: the decoder ends holding the n trace handles and a few
// containers, not 3n dicts and lists (a 30 MB file of this shape once took
// 314 MB). Counted, not timed: Stats is deterministic.
func TestUnknownNestedDictsReleased(t *testing.T) {
	const n = 30000
	raw := futurePickle(n)
	b := newBuilder()
	dec := pickle.NewDecoder(bytes.NewReader(raw), pickle.Options{Size: int64(len(raw)), Hooks: b})
	b.dec = dec
	top, err := dec.Decode()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.assemble(dec, top); err != nil {
		t.Fatal(err)
	}
	tr := b.snap.Traces
	if len(tr) != 1 || len(tr[0]) != n || tr[0][n-1].Addr != uint64(n-1)*512 || tr[0][n-1].TimeUS != n-1 {
		t.Fatalf("traces decoded wrong: %d lists", len(tr))
	}
	st := dec.Stats()
	if st.Conts > 16 || st.Items > n+16 {
		t.Errorf("holding %d containers and %d items after decoding, want about the %d handles (%+v)", st.Conts, st.Items, n, st)
	}
	// The peak: memo and strings, the handles, and one pending batch.
	if limit := st.Memo + st.Strings + n + 1000*40; st.PeakLive > limit {
		t.Errorf("peak %d live values, want at most %d (%+v)", st.PeakLive, limit, st)
	}
}

// TestTraceGrowsOnce: with the input's size known, the trace's capacity is
// estimated once the first traceFirst entries are in, so it is allocated
// twice in all (no copy at the end), within 30% of what it needs; without
// a size it doubles. Either way every entry is there, in order.
func TestTraceGrowsOnce(t *testing.T) {
	const n = 100000
	raw := futurePickle(n)
	for _, size := range []int64{int64(len(raw)), -1} {
		b := newBuilder()
		b.size = size
		dec := pickle.NewDecoder(bytes.NewReader(raw), pickle.Options{Size: size, Hooks: b})
		b.dec = dec
		top, err := dec.Decode()
		if err != nil {
			t.Fatal(err)
		}
		if err := b.assemble(dec, top); err != nil {
			t.Fatal(err)
		}
		tr := b.snap.Traces
		if len(tr) != 1 || len(tr[0]) != n {
			t.Fatalf("size %d: traces %d", size, len(tr))
		}
		for j, e := range tr[0] {
			if e.Addr != uint64(j)*512 || e.TimeUS != int64(j) {
				t.Fatalf("size %d: entry %d is %+v", size, j, e)
			}
		}
		want := n + n*3/10
		if size < 0 {
			want = 4 * traceFirst // 32k, 64k, 128k
		}
		if c := cap(b.traces); c < n || c > want {
			t.Errorf("size %d: capacity %d for %d entries, want at most %d", size, c, n, want)
		}
	}
}
