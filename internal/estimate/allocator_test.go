package estimate

import (
	"testing"

	"github.com/torchmem/torchmem/internal/allocconf"
)

func TestAllocatorRounding(t *testing.T) {
	var a allocator
	small := a.malloc(100) // small pool: 512 B blocks out of a 2 MiB segment
	if small.size != 512 || a.reserved != 2<<20 {
		t.Fatalf("100 B: block %d, reserved %d", small.size, a.reserved)
	}
	mid := a.malloc(3 << 20) // large pool, under 10 MiB: a 20 MiB segment, split
	if mid.size != 3<<20 || a.reserved != 22<<20 {
		t.Fatalf("3 MiB: block %d, reserved %d", mid.size, a.reserved)
	}
	var b allocator
	big := b.malloc(11<<20 + 1) // 10 MiB and over: rounded up to 2 MiB
	// 12 MiB - (11 MiB + 512) is under 1 MiB: not split, the block is the segment.
	if b.reserved != 12<<20 || big.size != 12<<20 {
		t.Fatalf("11 MiB+1: block %d, reserved %d, want the whole 12 MiB segment", big.size, b.reserved)
	}
	a.release(mid)
	again := a.malloc(5 << 20) // best fit: the 20 MiB segment's free space
	if again.seg != mid.seg || a.reserved != 22<<20 {
		t.Fatalf("5 MiB after free: segment %d (want %d), reserved %d", again.seg, mid.seg, a.reserved)
	}
}

// A tensor re-made one step longer while the old one lives (torch.cat on a
// KV cache) strands the old segment whenever the size crosses a 2 MiB
// boundary: without a limit the reserve grows; at a limit the wholly free
// segments are released and the job goes on.
func TestAllocatorLimitReleasesCache(t *testing.T) {
	grow := func(limit int64) allocator {
		a := allocator{limit: limit}
		cur := a.malloc(40 << 20)
		for n := int64(40 << 20); n < 80<<20; n += 64 << 10 {
			next := a.malloc(n)
			a.release(cur)
			cur = next
		}
		return a
	}
	free := grow(0)
	if free.peak < 10*(80<<20) || free.releases != 0 || free.oom {
		t.Fatalf("unbounded: peak %d, releases %d, oom %v", free.peak, free.releases, free.oom)
	}
	limited := grow(300 << 20)
	if limited.peak > 300<<20 || limited.releases == 0 || limited.oom {
		t.Fatalf("limited to 300 MiB: peak %d, releases %d, oom %v", limited.peak, limited.releases, limited.oom)
	}
}

func TestAllocatorOOM(t *testing.T) {
	a := allocator{limit: 100 << 20}
	a.malloc(60 << 20)
	if a.oom {
		t.Fatal("60 MiB of 100 should fit")
	}
	a.malloc(60 << 20)
	if !a.oom {
		t.Fatal("120 MiB live in a 100 MiB limit is an out-of-memory error")
	}
}

// A long generation on a GPU: the estimate stays within the GPU, says the
// cache was released, and a job too big for it is an OOM, not a fit.
func TestGenerationWithinGPU(t *testing.T) {
	md := preset(t, "meta-llama/Llama-3.2-1B")
	o := Options{Batch: 16, Seq: 256, GenLen: 2048, Inference: true, Precision: "bf16", NoLoadFP32: true}
	free, err := Estimate(md, o)
	if err != nil {
		t.Fatal(err)
	}
	if free.PeakReservedBytes < 2*free.PeakAllocatedBytes || free.CachedFreeBytes == 0 {
		t.Errorf("unbounded generation: reserved %d for %d allocated, cached free %d: the stranded cache segments are missing",
			free.PeakReservedBytes, free.PeakAllocatedBytes, free.CachedFreeBytes)
	}
	gpu := GPU{Name: "8GiB", MemoryBytes: 8 << 30}
	r, fit, err := Plan(md, o, gpu, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !fit.Fits || r.OOM || r.CacheReleases == 0 || r.ProcessBytes > gpu.MemoryBytes || len(fit.Notes) == 0 {
		t.Errorf("on 8 GiB: fits %v oom %v releases %d process %d notes %q", fit.Fits, r.OOM, r.CacheReleases, r.ProcessBytes, fit.Notes)
	}
	small := GPU{Name: "3GiB", MemoryBytes: 3 << 30}
	r, fit, err = Plan(md, o, small, 0)
	if err != nil {
		t.Fatal(err)
	}
	if fit.Fits || !r.OOM {
		t.Errorf("3.8 GB of live tensors on 3 GiB: fits %v oom %v", fit.Fits, r.OOM)
	}
}

// Between two jobs of one process only the kept blocks stay: a segment
// that holds one cannot be given back, and its free rest serves the next
// job (the cuBLAS workspace pinning a large segment in process.go).
func TestAllocatorBetweenJobs(t *testing.T) {
	var a allocator
	act := a.malloc(150 << 20) // a job's activation: its own 150 MiB segment
	a.release(act)
	ws := a.malloc(32 << 20)   // the workspace is cut from the cached segment
	other := a.malloc(3 << 20) // and so is this one
	small := a.malloc(4096)    // a small-pool segment of 2 MiB
	if ws.seg != act.seg || other.seg != act.seg || a.peak != 150<<20+2<<20 {
		t.Fatalf("workspace in segment %d (want %d), peak %d", ws.seg, act.seg, a.peak)
	}
	a.between(ws)
	if a.reserved != 150<<20 || a.peak != a.reserved || len(a.segs) != 1 {
		t.Fatalf("after the job: reserved %d, peak %d, %d segments; want the pinned 150 MiB only", a.reserved, a.peak, len(a.segs))
	}
	if other.free != true || small.free != true || ws.free {
		t.Fatal("the job's tensors must be free and the workspace kept")
	}
	w := a.malloc(100 << 20) // the next job's weights fit in the pinned rest
	if w.seg != act.seg || a.reserved != 150<<20 {
		t.Fatalf("next job: segment %d (want %d), reserved %d", w.seg, act.seg, a.reserved)
	}
}

// Under expandable segments a block that keeps growing by a little
// reuses the pages already mapped: the default rules strand a 20 MiB
// segment each time the size crosses one (TestAllocatorLimitReleasesCache).
func TestExpandableGrowsInPlace(t *testing.T) {
	a := allocator{expandable: true}
	cur := a.malloc(40 << 20)
	if a.reserved != 40<<20 {
		t.Fatalf("40 MiB: reserved %d, want two 20 MiB pages", a.reserved)
	}
	for n := int64(40 << 20); n < 80<<20; n += 64 << 10 {
		next := a.malloc(n)
		a.release(cur)
		cur = next
	}
	// the default rules reserve 10 times the largest size here; the
	// segment stays one, under 3 times it
	if a.peak > 3*(80<<20) || a.segments != 1 {
		t.Fatalf("peak %d MiB, %d segments", a.peak>>20, a.segments)
	}
	small := a.malloc(100)
	if a.segments != 2 || a.reserved%(2<<20) != 0 || small.size != 512 {
		t.Fatalf("small pool: %d segments, reserved %d", a.segments, a.reserved)
	}
	a.release(cur)
	before := a.reserved
	free := a.cachedFree()
	a.emptyCache()
	if a.reserved != before-free || a.reserved != 2<<20 {
		t.Fatalf("empty_cache: reserved %d, want %d (the small pool's page)", a.reserved, before-free)
	}
	again := a.malloc(30 << 20) // maps again where the pages were unmapped
	if a.reserved != 2<<20+40<<20 || again.off != 0 || a.segments != 2 {
		t.Fatalf("after empty_cache: reserved %d MiB, offset %d, %d segments", a.reserved>>20, again.off, a.segments)
	}
}

// At the limit the cached pages are unmapped before the request maps its
// own; past it, an OOM.
func TestExpandableLimit(t *testing.T) {
	a := allocator{expandable: true, limit: 100 << 20}
	x := a.malloc(60 << 20)
	a.malloc(10 << 20) // 80 MiB mapped: [0,60) x, [60,70), [70,80) free
	a.release(x)
	a.malloc(50 << 20) // the cached 60 serves it: nothing mapped
	if a.reserved != 80<<20 || a.releases != 0 {
		t.Fatalf("reserved %d MiB, releases %d", a.reserved>>20, a.releases)
	}
	b := allocator{expandable: true, limit: 100 << 20}
	x = b.malloc(60 << 20)
	b.malloc(10 << 20)
	b.release(x)
	// [70,80) and 60 MiB more would pass 100: [0,60) is unmapped first
	b.malloc(70 << 20)
	if b.releases != 1 || b.oom || b.reserved != 80<<20 {
		t.Fatalf("reserved %d MiB, releases %d, oom %v", b.reserved>>20, b.releases, b.oom)
	}
	b.malloc(60 << 20)
	if !b.oom {
		t.Fatalf("140 MiB in use of 100: no OOM, reserved %d MiB", b.reserved>>20)
	}
}

// max_split_size_mb: blocks that large are not split for smaller
// requests, and are released first at the limit.
func TestMaxSplit(t *testing.T) {
	a := allocator{maxSplit: 128 << 20}
	big := a.malloc(200 << 20)
	a.release(big)
	small := a.malloc(50 << 20) // must not be carved out of the 200 MiB block
	if small.seg == big.seg || a.reserved != 200<<20+50<<20 {
		t.Fatalf("50 MiB from the oversize block: segment %d, reserved %d MiB", small.seg, a.reserved>>20)
	}
	near := a.malloc(190 << 20) // 190+20 > 200: the oversize block serves it, whole
	if near.seg != big.seg || near.size != 200<<20 {
		t.Fatalf("190 MiB: segment %d size %d MiB, want the cached 200 MiB whole", near.seg, near.size>>20)
	}
	var d allocator
	dbig := d.malloc(200 << 20)
	d.release(dbig)
	if s := d.malloc(50 << 20); s.seg != dbig.seg {
		t.Fatal("without max_split_size_mb the cached block is split")
	}
	l := allocator{maxSplit: 128 << 20, limit: 400 << 20}
	o1, o2 := l.malloc(150<<20), l.malloc(150<<20)
	keep := l.malloc(20 << 20) // a split 20 MiB segment, partly used
	l.malloc(1 << 20)
	l.release(o1)
	l.release(o2)
	l.release(keep) // wholly free again, but not oversize
	l.malloc(300 << 20)
	// the 2 MiB small segment, the 20 MiB one, the new 300 MiB one
	if l.oom || l.releases != 0 || l.reserved != 2<<20+20<<20+300<<20 {
		t.Fatalf("release of the oversize blocks first: reserved %d MiB, releases %d, oom %v", l.reserved>>20, l.releases, l.oom)
	}
}

// roundup_power2_divisions: a request is rounded up to the next of the
// divisions of its power of 2 (c10's roundup_power2_next_division), in
// the intervals the option names; elsewhere, to 512 bytes.
func TestRoundupPower2Divisions(t *testing.T) {
	var a allocator
	for i := range a.roundup {
		a.roundup[i] = 4
	}
	for n, want := range map[int64]int64{
		1100 << 20:    1280 << 20, // 1 GiB in quarters: 1,024, 1,280, 1,536...
		1024 << 20:    1024 << 20, // a power of 2 stays
		(1 << 20) + 1: 1280 << 10, // 1 MiB in quarters of 256 KiB
		1500:          1536,       // 4 x 512 or less: 512-byte rounding
		3000:          3072,       // 2,048 in quarters of 512
		2100:          2560,
	} {
		if got := a.round(n); got != want {
			t.Errorf("4 divisions: %d -> %d, want %d", n, got, want)
		}
	}
	a.roundup = [16]int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2} // [1024:2]: 1 to 2 GiB only
	if got := a.round(1100 << 20); got != 1536<<20 {
		t.Errorf("[1024:2]: 1,100 MiB -> %d MiB, want 1,536", got>>20)
	}
	if got := a.round(600 << 20); got != 600<<20 {
		t.Errorf("[1024:2]: 600 MiB -> %d MiB, want it as it is", got>>20)
	}
	if b := a.malloc(1100 << 20); b.size != 1536<<20 || a.reserved != 1536<<20 {
		t.Errorf("malloc 1,100 MiB: block %d MiB, reserved %d MiB", b.size>>20, a.reserved>>20)
	}
}

// TestGarbageCollection: under a memory fraction, garbage_collection_threshold
// gives back the cached segments unused the longest before a new segment
// is made, once reserved is over the threshold's share of the fraction
// (c10's garbage_collect_cached_blocks); without a fraction, or under
// expandable segments, it does nothing.
func TestGarbageCollection(t *testing.T) {
	const gib, mib = int64(1 << 30), int64(1 << 20)
	var oldest int // x1's segment: cached the longest in the threshold run
	run := func(conf string) allocator {
		c, err := allocconf.Parse(conf)
		if err != nil {
			t.Fatal(err)
		}
		a := newAllocator(0, c, 10*gib) // 0.6 of 0.5 of 10 GiB: over 3 GiB
		x1, x2 := a.malloc(gib), a.malloc(gib)
		a.malloc(gib)
		a.malloc(600 * mib) // reserved 3.6 GiB: no collection yet (no request needed a segment over 3 GiB)
		a.release(x1)
		a.release(x2)
		// x2's segment, used again: of two free blocks of a size the
		// lower address, and the driver put the younger segment below.
		y := a.malloc(gib)
		if y.seg != x2.seg {
			t.Fatalf("%s: 1 GiB again took segment %d, want x2's %d", conf, y.seg, x2.seg)
		}
		oldest = x1.seg
		a.release(y)
		a.malloc(2 * gib) // no cached block fits: collect first
		return a
	}
	gc := run("garbage_collection_threshold:0.6,per_process_memory_fraction:0.5")
	if gc.collections != 1 || gc.reserved != 4*gib+600*mib || gc.peak != 4*gib+600*mib {
		t.Errorf("collected %d times, reserved %d, peak %d: want once, x1's 1 GiB given back, 4.6 GiB",
			gc.collections, gc.reserved, gc.peak)
	}
	for _, h := range gc.segs {
		if h.seg == oldest {
			t.Errorf("x1's segment (cached the longest) is still held")
		}
	}
	for _, conf := range []string{"garbage_collection_threshold:0.6",
		"garbage_collection_threshold:0.6,per_process_memory_fraction:0.5,expandable_segments:True"} {
		if a := run(conf); a.collections != 0 || a.gcAt != 0 {
			t.Errorf("%s: collected %d times (at %d): want never", conf, a.collections, a.gcAt)
		}
	}
	if a := run("per_process_memory_fraction:0.5"); a.peak != 5*gib+600*mib {
		t.Errorf("no threshold: peak %d, want 5.6 GiB", a.peak)
	}
}
