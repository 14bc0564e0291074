package estimate

import (
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/allocconf"
)

// TestStreamPools: a block freed on a side stream is cached for that
// stream: the default stream's request of the same size takes a segment
// of its own, and the side stream's next one the cached block. At the
// limit, the release gives back every stream's free segments.
func TestStreamPools(t *testing.T) {
	var a allocator
	x := a.mallocOn(40<<20, 1)
	a.release(x)
	y := a.mallocOn(40<<20, 0)
	if y.seg == x.seg || a.reserved != 80<<20 {
		t.Fatalf("default stream after a side stream's free: segment %d (side's %d), reserved %d, want 80 MiB",
			y.seg, x.seg, a.reserved)
	}
	if z := a.mallocOn(40<<20, 1); z.seg != x.seg || a.reserved != 80<<20 {
		t.Fatalf("side stream again: segment %d, want its cached %d; reserved %d", z.seg, x.seg, a.reserved)
	}
	// small pool too
	s := a.mallocOn(4096, 2)
	if d := a.mallocOn(4096, 0); d.seg == s.seg {
		t.Fatalf("small pool shared between streams: segment %d", d.seg)
	}

	l := allocator{limit: 100 << 20}
	l.release(l.mallocOn(60<<20, 1))
	if b := l.mallocOn(60<<20, 0); l.oom || l.releases != 1 || b.stream != 0 || l.reserved != 60<<20 {
		t.Fatalf("at the limit: oom %v, releases %d, reserved %d; want the side stream's segment given back",
			l.oom, l.releases, l.reserved)
	}
}

// TestStreamPoolsExpandable: under expandable segments each stream grows
// segments of its own; empty_cache unmaps every stream's free pages.
func TestStreamPoolsExpandable(t *testing.T) {
	a := newAllocator(0, allocconf.Conf{Expandable: true}, 0)
	x := a.mallocOn(60<<20, 1)
	a.release(x)
	y := a.mallocOn(60<<20, 0)
	if y.seg == x.seg || a.reserved != 120<<20 {
		t.Fatalf("expandable: default stream segment %d (side's %d), reserved %d, want 120 MiB", y.seg, x.seg, a.reserved)
	}
	a.emptyCache()
	if a.reserved != 60<<20 {
		t.Fatalf("empty_cache: reserved %d, want the default stream's 60 MiB", a.reserved)
	}
}

// TestStreamPoolsOversize: max_split_size_mb's release at the limit gives
// back the requesting stream's oversize blocks first (another stream's
// only by the release of everything after it).
func TestStreamPoolsOversize(t *testing.T) {
	a := newAllocator(400<<20, allocconf.Conf{MaxSplit: 100 << 20}, 0)
	mine := a.mallocOn(150<<20, 0)
	other := a.mallocOn(150<<20, 1)
	a.release(mine)
	a.release(other)
	if !a.releaseOversize(150<<20, 1) || !other.gone || mine.gone {
		t.Fatalf("oversize release for stream 1: other gone %v, mine gone %v", other.gone, mine.gone)
	}
}

// A trace's T events put what follows on a stream: a prefetcher's batch
// made on its side stream and freed there is not reused by the forward.
func TestTraceStreams(t *testing.T) {
	trace := func(side string) string {
		return "torchmem-trace\t1\tdevice=meta\ttorch=2.5.1\tsteps=1\n" +
			"S\t1\ttrain.py:10:<module>\n" + side +
			"A\t1\t31457280\tdata\tsetup\t1\t1\t\taten._to_copy.default\tuint8\t31457280\n" +
			"F\t1\n" +
			"T\t0\n" +
			"A\t2\t31457280\tdata\tsetup\t1\t1\t\taten.empty.memory_format\tuint8\t31457280\n" +
			"E\texit\t\t1\tthe program ended\n"
	}
	for _, c := range []struct {
		side string
		want int64
	}{{"", 30 << 20}, {"T\t1\n", 60 << 20}} {
		tr, err := ParseTrace(strings.NewReader(trace(c.side)))
		if err != nil {
			t.Fatal(err)
		}
		if tr.Allocs[0].Stream != 1 && c.side != "" || tr.Allocs[1].Stream != 0 {
			t.Errorf("streams %d, %d", tr.Allocs[0].Stream, tr.Allocs[1].Stream)
		}
		r := ReplayTrace(tr, TraceReplay{ComputeCapability: 90})
		if r.PeakReservedBytes != c.want {
			t.Errorf("side stream %q: peak reserved %d, want %d", c.side, r.PeakReservedBytes, c.want)
		}
		m := TraceSnapshot(tr, TraceReplay{})
		if c.side != "" && (len(m.Segments) != 2 || m.Segments[0].Stream != 1 || m.Actions[0].Stream != 1) {
			t.Errorf("snapshot segments %+v", m.Segments)
		}
	}
	for _, bad := range []string{"T\t-1\n", "T\tx\n", "T\t1024\n"} {
		_, err := ParseTrace(strings.NewReader("torchmem-trace\t1\n" + bad))
		if err == nil || !strings.Contains(err.Error(), "line 2: stream") {
			t.Errorf("%q: error %v", bad, err)
		}
	}
}
