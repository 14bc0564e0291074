package estimate

import "sort"

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
type allocator struct {
	free     [2][]*block // per pool, kept sorted by (size, segment, offset)
	segs     []*block    // each segment's first block (the whole list of a segment's blocks)
	reserved int64
	peak     int64 // torch.cuda.max_memory_reserved()
	segments int
	limit    int64 // what the allocator may reserve, 0 for no limit
	releases int   // times the cache was released to make room
	oom      bool
}

type block struct {
	seg        int
	off, size  int64
	pool       int
	free       bool
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
	if a.seg != b.seg {
		return a.seg < b.seg
	}
	return a.off < b.off
}

func (a *allocator) insert(b *block) {
	l := a.free[b.pool]
	i := sort.Search(len(l), func(i int) bool { return !less(l[i], b) })
	l = append(l, nil)
	copy(l[i+1:], l[i:])
	l[i] = b
	a.free[b.pool] = l
}

func (a *allocator) remove(b *block) {
	l := a.free[b.pool]
	i := sort.Search(len(l), func(i int) bool { return !less(l[i], b) })
	if i < len(l) && l[i] == b {
		a.free[b.pool] = append(l[:i], l[i+1:]...)
	}
}

// malloc returns the block serving a request of n bytes; its size is what
// torch.cuda.memory_allocated() counts.
func (a *allocator) malloc(n int64) *block {
	size := roundSize(n)
	pool := 1
	if size <= smallSize {
		pool = 0
	}
	l := a.free[pool]
	i := sort.Search(len(l), func(i int) bool { return l[i].size >= size })
	var b *block
	if i < len(l) {
		b = l[i]
		a.remove(b)
	} else {
		b = a.newSegment(segmentSize(size), pool)
	}
	rest := b.size - size
	if (pool == 0 && rest >= minBlock) || (pool == 1 && rest > smallSize) {
		r := &block{seg: b.seg, off: b.off + size, size: rest, pool: pool, free: true, prev: b, next: b.next}
		if b.next != nil {
			b.next.prev = r
		}
		b.next, b.size = r, size
		a.insert(r)
	}
	b.free = false
	return b
}

// newSegment reserves seg bytes from the driver, first releasing the cache
// when the limit is in the way (release_cached_blocks in PyTorch).
func (a *allocator) newSegment(seg int64, pool int) *block {
	if a.limit > 0 && a.reserved+seg > a.limit {
		a.releaseCached()
		if a.reserved+seg > a.limit {
			a.oom = true // the walk goes on so the rest of the job is still reported
		}
	}
	a.reserved += seg
	a.peak = max(a.peak, a.reserved)
	a.segments++
	b := &block{seg: a.segments, size: seg, pool: pool}
	a.segs = append(a.segs, b)
	return b
}

// wholeSegment: b has no neighbours, so it spans its segment (a free one
// is a segment no tensor uses any part of).
func (b *block) wholeSegment() bool { return b.prev == nil && b.next == nil }

// cachedFree is what torch.cuda.empty_cache() would give back now: the
// segments no tensor uses any part of.
func (a *allocator) cachedFree() int64 {
	var n int64
	for _, l := range a.free {
		for _, b := range l {
			if b.wholeSegment() {
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
// torch.cuda.empty_cache() does.
func (a *allocator) emptyCache() {
	for p := range a.free {
		kept := a.free[p][:0]
		for _, b := range a.free[p] {
			if b.wholeSegment() {
				a.reserved -= b.size
				continue
			}
			kept = append(kept, b)
		}
		a.free[p] = kept
	}
	segs := a.segs[:0]
	for _, h := range a.segs {
		if !(h.free && h.wholeSegment()) {
			segs = append(segs, h)
		}
	}
	a.segs = segs
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

// release frees b and merges it with free neighbours.
func (a *allocator) release(b *block) {
	b.free = true
	if p := b.prev; p != nil && p.free {
		a.remove(p)
		p.size += b.size
		p.next = b.next
		if b.next != nil {
			b.next.prev = p
		}
		b = p
	}
	if n := b.next; n != nil && n.free {
		a.remove(n)
		b.size += n.size
		b.next = n.next
		if n.next != nil {
			n.next.prev = b
		}
	}
	a.insert(b)
}
