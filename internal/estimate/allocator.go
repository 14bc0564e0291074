package estimate

import (
	"math/bits"
	"sort"

	"github.com/torchmem/torchmem/internal/allocconf"
)

// allocator replays allocations through the rules of PyTorch's CUDA caching
// allocator (c10/cuda/CUDACachingAllocator.cpp) to get the reserved memory —
// what the process holds from the driver — rather than what is in use:
//   - every request is rounded up to a multiple of 512 bytes;
//   - requests up to 1 MiB come from the small pool, carved out of 2 MiB
//     segments; larger ones from the large pool, whose new segments are
//     20 MiB for requests under 10 MiB and the request rounded up to 2 MiB
//     above that;
//   - a request takes the smallest free block that fits (best fit), split
//     when the rest is at least 512 B (small pool) or over 1 MiB (large);
//   - freed blocks merge with free neighbours of the same segment, and
//     segments go back to the driver only when a new one would not fit in
//     the device (limit): then, as when cudaMalloc fails, every cached
//     segment that is wholly free is released and the request retried;
//     a request that still does not fit is a CUDA out-of-memory error.
//
// PYTORCH_CUDA_ALLOC_CONF changes some of these rules (conf):
// max_split_size_mb and roundup_power2_divisions here,
// expandable_segments in allocator_expandable.go.
type allocator struct {
	free     [][]*block // per stream's pool (poolKey), kept sorted by (size, segment, offset)
	segs     []*block   // each segment's first block (the whole list of a segment's blocks)
	reserved int64
	peak     int64 // torch.cuda.max_memory_reserved()
	segments int
	limit    int64 // what the allocator may reserve, 0 for no limit
	releases int   // times the cache was released to make room
	oom      bool
	// maxSplit: max_split_size_mb in bytes (0: none). Blocks this large
	// ("oversize") are never split, serve only requests of about their
	// size, and are the first released when the limit is reached.
	maxSplit int64
	// expandable: expandable_segments:True. unmapped holds each pool's
	// unmapped blocks in address order; va is an expandable segment's
	// address space (0: expandableVA).
	expandable bool
	// roundup: roundup_power2_divisions by size interval (allocconf's).
	roundup  [allocconf.RoundupIntervals]int
	unmapped [][]*block // by poolKey
	va       int64
	// gcAt: garbage_collection_threshold under a memory fraction, the
	// reserved bytes over which a request that needs a new segment first
	// gives back the cached segments unused the longest (0: never;
	// allocator_gc.go). gcCalls counts the large pool's searches, the
	// clock of a cached block's age (block.gcBase); collections, the times
	// it gave memory back.
	gcAt        int64
	gcCalls     int64
	collections int
	// notify, when set, is told of each change of what is reserved (the
	// snapshot writer's segment_alloc, segment_map... entries).
	notify func(segEvent)
}

// segEvent is a change of the memory held from the driver: a segment
// made or given back, or an expandable segment's pages mapped or
// unmapped (action as PyTorch's trace names it), or "reserve": an
// expandable segment's address space, size bytes, taken before any of
// it is mapped (no trace entry of its own).
type segEvent struct {
	action    string
	seg, pool int
	stream    int32
	off, size int64
}

func (a *allocator) tell(action string, b *block, size int64) {
	if a.notify != nil {
		a.notify(segEvent{action: action, seg: b.seg, pool: b.pool, stream: b.stream, off: b.off, size: size})
	}
}

// newAllocator is an allocator under limit (0: none) following conf's
// rules on a GPU of gpuBytes (0: unknown). Under a limit its expandable
// segments are as large as the GPU's memory and an eighth
// (cuMemAddressReserve'd so); without one, the replay is of what the job
// needs on a GPU large enough, whose segments are too (expandableVA).
func newAllocator(limit int64, conf allocconf.Conf, gpuBytes int64) allocator {
	a := allocator{limit: limit, maxSplit: conf.MaxSplit, expandable: conf.Expandable, roundup: conf.Roundup,
		gcAt: gcBytes(conf, gpuBytes)}
	if limit > 0 {
		a.va = gpuBytes + gpuBytes/8
	}
	return a
}

type block struct {
	seg        int
	off, size  int64
	pool       int   // 0 small, 1 large
	stream     int32 // the stream it was made on (0: the default one)
	free       bool
	unmapped   bool  // of an expandable segment: address space without memory (free too)
	gone       bool  // a segment's first block, the segment given back
	gcBase     int64 // the large pool's searches when it was cached (allocator_gc.go)
	prev, next *block
}

const (
	minBlock    = 512
	smallSize   = 1 << 20
	smallBuffer = 2 << 20
	largeBuffer = 20 << 20
	minLarge    = 10 << 20
	roundLarge  = 2 << 20
)

func roundSize(n int64) int64 {
	if n < minBlock {
		return minBlock
	}
	return (n + minBlock - 1) / minBlock * minBlock
}

// round is roundSize, or with roundup_power2_divisions for n's size the
// next of that many divisions of n's power of 2 (round_size,
// roundup_power2_next_division): with 4, 1,100 MiB becomes 1,280 MiB.
func (a *allocator) round(n int64) int64 {
	i := min(max(bits.Len64(uint64(n))-1-20, 0), len(a.roundup)-1) // from 1 MiB up, by powers of 2
	d := int64(a.roundup[i])
	if n < minBlock || d <= 1 || n <= minBlock*d {
		return roundSize(n)
	}
	if n&(n-1) == 0 {
		return n
	}
	floor := int64(1) << (bits.Len64(uint64(n)) - 1)
	step := floor >> (bits.Len64(uint64(d)) - 1)
	if step == 0 {
		return floor << 1
	}
	if f := n &^ (step - 1); f != n {
		return f + step
	}
	return n
}

func segmentSize(n int64) int64 {
	switch {
	case n <= smallSize:
		return smallBuffer
	case n < minLarge:
		return largeBuffer
	}
	return (n + roundLarge - 1) / roundLarge * roundLarge
}

func less(a, b *block) bool {
	if a.size != b.size {
		return a.size < b.size
	}
	return addrLess(a, b)
}

// addrLess orders blocks by address: segment, then offset. Segments are
// numbered downward (newSegment): the youngest lies lowest.
func addrLess(a, b *block) bool {
	if a.seg != b.seg {
		return a.seg < b.seg
	}
	return a.off < b.off
}

// poolKey: the free list of a stream's small (0) or large (1) pool. A
// block serves only requests made on the stream its segment was made on
// (c10's BlockComparator orders by stream first and get_free_block takes
// no other stream's): what a side stream frees (a prefetcher's batches,
// FSDP's all-gathered and reduce-scattered buffers) is cached for that
// stream alone.
func poolKey(stream int32, pool int) int { return 2*int(stream) + pool }

func (b *block) key() int { return poolKey(b.stream, b.pool) }

// freeList is the free list of key k (made when first asked for).
func freeList(lists *[][]*block, k int) *[]*block {
	for len(*lists) <= k {
		*lists = append(*lists, nil)
	}
	return &(*lists)[k]
}

func (a *allocator) insert(b *block) {
	b.gcBase = a.gcCalls
	l := freeList(&a.free, b.key())
	*l = insertSorted(*l, b, less)
}

func (a *allocator) remove(b *block) {
	l := freeList(&a.free, b.key())
	*l = removeSorted(*l, b, less)
}

// insertSorted puts b into l, kept sorted by lt.
func insertSorted(l []*block, b *block, lt func(x, y *block) bool) []*block {
	i := sort.Search(len(l), func(i int) bool { return !lt(l[i], b) })
	l = append(l, nil)
	copy(l[i+1:], l[i:])
	l[i] = b
	return l
}

// removeSorted takes b out of l, sorted by lt (l as it was when b is not
// in it).
func removeSorted(l []*block, b *block, lt func(x, y *block) bool) []*block {
	i := sort.Search(len(l), func(i int) bool { return !lt(l[i], b) })
	if i < len(l) && l[i] == b {
		return append(l[:i], l[i+1:]...)
	}
	return l
}

// splitAt cuts b after size bytes and returns the rest, a block of its
// own after b, free and mapped as b is (the caller files it).
func (b *block) splitAt(size int64) *block {
	r := &block{seg: b.seg, off: b.off + size, size: b.size - size, pool: b.pool, stream: b.stream, free: b.free,
		unmapped: b.unmapped, prev: b, next: b.next}
	if b.next != nil {
		b.next.prev = r
	}
	b.next, b.size = r, size
	return r
}

// absorbNext: b takes in the block after it, as one block of the two.
func (b *block) absorbNext() {
	n := b.next
	b.size += n.size
	b.next = n.next
	if n.next != nil {
		n.next.prev = b
	}
}

// malloc returns the block serving a request of n bytes on the default
// stream; its size is what torch.cuda.memory_allocated() counts.
func (a *allocator) malloc(n int64) *block { return a.mallocOn(n, 0) }

// mallocOn is malloc for a request made on stream.
func (a *allocator) mallocOn(n int64, stream int32) *block {
	size := a.round(n)
	pool := 1
	if size <= smallSize {
		pool = 0
	}
	b := a.bestFit(size, poolKey(stream, pool))
	switch {
	case b != nil:
		a.remove(b)
	case a.expandable:
		b = a.growExpandable(size, pool, stream)
	default:
		a.collect()
		b = a.newSegment(segmentSize(size), pool, stream, size)
	}
	a.split(b, size)
	b.free = false
	return b
}

// bestFit is the smallest cached block of the free list key that may
// serve size (nil: none), as get_free_block chooses it.
func (a *allocator) bestFit(size int64, key int) *block {
	if key%2 == 1 && a.gcAt > 0 {
		a.gcCalls++ // (get_free_blocks_call_count)
	}
	l := *freeList(&a.free, key)
	i := sort.Search(len(l), func(i int) bool { return l[i].size >= size })
	if i == len(l) {
		return nil
	}
	if a.expandable {
		i = expandableFit(l, i)
	}
	b := l[i]
	if a.maxSplit > 0 {
		if size < a.maxSplit && b.size >= a.maxSplit {
			return nil // an oversize block for a smaller request
		}
		if size >= a.maxSplit && b.size >= size+largeBuffer {
			return nil // an oversize block much larger than the request
		}
	}
	return b
}

// split cuts b to size, the rest a free block, when the rule allows:
// in the small pool and under expandable segments a rest of one minimum
// block is enough; in the large pool it must be over 1 MiB, and an
// oversize request (max_split_size_mb) is never split.
func (a *allocator) split(b *block, size int64) {
	rest := b.size - size
	ok := rest >= minBlock
	if b.pool == 1 && !a.expandable {
		ok = rest > smallSize && (a.maxSplit == 0 || size < a.maxSplit)
	}
	if !ok {
		return
	}
	r := b.splitAt(size)
	r.free = true // (a new segment's first block is made in use)
	a.insert(r)
}

// newSegment reserves seg bytes from the driver for a request of size on
// stream, first releasing the cache when the limit is in the way: the
// stream's oversize blocks enough for it (release_available_cached_blocks,
// with max_split_size_mb), then every wholly free segment of any stream
// (release_cached_blocks).
func (a *allocator) newSegment(seg int64, pool int, stream int32, size int64) *block {
	if a.limit > 0 && a.reserved+seg > a.limit {
		if !a.releaseOversize(size, stream) || a.reserved+seg > a.limit {
			a.releaseCached()
		}
		if a.reserved+seg > a.limit {
			a.oom = true // the walk goes on so the rest of the job is still reported
		}
	}
	a.reserved += seg
	a.peak = max(a.peak, a.reserved)
	a.segments++
	// The CUDA driver mostly maps a new segment below the ones before it
	// (of 133 segments after the first in an H200 Llama run, 85 went below
	// all earlier ones and 3 above all; 215 of 273 in another capture), and
	// of two free blocks of a size the allocator takes the lower address:
	// numbered downward, a replay of real requests makes PyTorch's very
	// segments (allocator_real_test.go).
	b := &block{seg: -a.segments, size: seg, pool: pool, stream: stream}
	a.segs = append(a.segs, b)
	a.tell("segment_alloc", b, seg)
	return b
}

// releaseOversize gives back cached oversize blocks (max_split_size_mb)
// of stream's large pool for a request of size: the smallest one as large
// as it, else the largest ones until as much is freed. false: not enough
// (or no max_split_size_mb).
func (a *allocator) releaseOversize(size int64, stream int32) bool {
	if a.maxSplit == 0 {
		return false
	}
	want := max(size, a.maxSplit)
	l := *freeList(&a.free, poolKey(stream, 1))
	i := sort.Search(len(l), func(i int) bool { return l[i].size >= want })
	if i < len(l) && l[i].wholeSegment() {
		a.dropSegment(l[i])
		a.pruneSegs()
		return true
	}
	var freed int64
	var drop []*block
	for j := len(l) - 1; j >= 0 && freed < want && l[j].size >= a.maxSplit; j-- {
		if l[j].wholeSegment() {
			freed += l[j].size
			drop = append(drop, l[j])
		}
	}
	for _, b := range drop {
		a.dropSegment(b)
	}
	a.pruneSegs()
	return freed >= want
}

// dropSegment gives a wholly free segment back to the driver (pruneSegs
// takes it off the list).
func (a *allocator) dropSegment(b *block) {
	a.remove(b)
	a.reserved -= b.size
	a.tell("segment_free", b, b.size)
	b.gone = true
}

// pruneSegs takes the segments given back off the list.
func (a *allocator) pruneSegs() {
	segs := a.segs[:0]
	for _, h := range a.segs {
		if !h.gone {
			segs = append(segs, h)
		}
	}
	clear(a.segs[len(segs):])
	a.segs = segs
}

// wholeSegment: b has no neighbours, so it spans its segment (a free one
// is a segment no tensor uses any part of).
func (b *block) wholeSegment() bool { return b.prev == nil && b.next == nil }

// cachedFree is what torch.cuda.empty_cache() would give back now: the
// segments no tensor uses any part of (under expandable segments, the
// whole pages of free blocks).
func (a *allocator) cachedFree() int64 {
	var n int64
	for _, l := range a.free {
		for _, b := range l {
			switch {
			case a.expandable:
				n += unmappable(b)
			case b.wholeSegment():
				n += b.size
			}
		}
	}
	return n
}

// releaseCached gives every wholly free segment back to the driver, as
// the allocator does at the GPU's limit before it retries (counted).
func (a *allocator) releaseCached() {
	a.emptyCache()
	a.releases++
}

// emptyCache gives every wholly free segment back to the driver, as
// torch.cuda.empty_cache() does (under expandable segments, unmaps the
// whole pages of every free block).
func (a *allocator) emptyCache() {
	if a.expandable {
		a.unmapFree()
		return
	}
	for p := range a.free {
		var drop []*block
		for _, b := range a.free[p] {
			if b.wholeSegment() {
				drop = append(drop, b)
			}
		}
		for _, b := range drop {
			a.dropSegment(b)
		}
	}
	a.pruneSegs()
}

// between is a process between two jobs: every tensor but keep is gone,
// torch.cuda.empty_cache() gives the wholly free segments back, and
// torch.cuda.reset_peak_memory_stats() restarts the reserved peak. A
// segment that holds a kept block stays, with its free rest cached.
func (a *allocator) between(keep ...*block) {
	kept := map[*block]bool{}
	for _, b := range keep {
		kept[b] = true
	}
	var used []*block
	for _, h := range a.segs {
		for b := h; b != nil; b = b.next {
			if !b.free && !kept[b] {
				used = append(used, b)
			}
		}
	}
	for _, b := range used {
		a.release(b)
	}
	a.releaseCached()
	a.releases = 0
	a.peak = a.reserved
}

// release frees b, merges it with free neighbours and returns the free
// block it is now part of.
func (a *allocator) release(b *block) *block {
	b.free = true
	if p := b.prev; p != nil && p.free && !p.unmapped {
		a.remove(p)
		p.absorbNext()
		b = p
	}
	if n := b.next; n != nil && n.free && !n.unmapped {
		a.remove(n)
		b.absorbNext()
	}
	a.insert(b)
	return b
}
