package estimate

// Expandable segments (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,
// torch >= 2.1; c10/cuda/CUDACachingAllocator.cpp, ExpandableSegment and
// try_allocate_expandable_block): each pool has one segment, an address
// space as large as the GPU's memory and an eighth, into which physical
// pages are mapped on demand: 2 MiB pages in the small pool, 20 MiB in
// the large one. What is reserved is the pages mapped.
//   - A request first takes the best-fitting free block, as without them,
//     except that a free block followed by unmapped space counts as that
//     much larger, so a block that cannot grow is preferred.
//   - Otherwise it takes the lowest-addressed free and unmapped space
//     that is large enough, mapping the pages it lacks: a free block at
//     the end of what is mapped grows instead of a new segment being made,
//     which is how they avoid fragmentation.
//   - Any rest of a block of at least 512 bytes is split off.
//   - empty_cache() (and the retry at the limit) unmaps the whole pages
//     of every free block.

// The lever of turning them on, for the built-in estimate and a trace
// alike: the same allocations, the segments' rules changed.
const (
	expandableLever  = "expandable-segments"
	expandableChange = "expandable_segments:True (in PYTORCH_CUDA_ALLOC_CONF, torch >= 2.1: one segment per pool grows " +
		"in place, so freed space is reused instead of stranded in segments of the wrong size)"
)

// The lever of dropping max_split_size_mb: with expandable segments it
// can make reserved grow without bound (TestMaxSplitWithExpandableGrows);
// alone, its oversize blocks are segments of their own that smaller
// requests cannot use.
const (
	noMaxSplitLever  = "no-max-split"
	noMaxSplitChange = "max_split_size_mb removed (from PYTORCH_CUDA_ALLOC_CONF: blocks that large are never " +
		"split for smaller requests; with expandable_segments reserved can grow without bound, pytorch/pytorch#123548)"
)

// expandablePage: the page an expandable segment maps, by pool.
var expandablePage = [2]int64{smallBuffer, largeBuffer}

// expandableVA: an expandable segment's address space when the model has
// no GPU size (an unbounded replay).
const expandableVA = 1 << 40

// expandableFit: from l[i], the smallest free block that fits, moves on
// while the next block, counted with the unmapped space after it, is
// smaller (get_free_block's expandable_size).
func expandableFit(l []*block, i int) int {
	for i+1 < len(l) && growable(l[i+1]) < growable(l[i]) {
		i++
	}
	return i
}

// growable: b's size with the unmapped space after it.
func growable(b *block) int64 {
	if b.next != nil && b.next.unmapped {
		return b.size + b.next.size
	}
	return b.size
}

// growExpandable maps pages for a request of size on stream that no free
// block serves and returns the free block they make, releasing the cache
// first at the limit (and past it, as newSegment, mapping anyway: an OOM).
func (a *allocator) growExpandable(size int64, pool int, stream int32) *block {
	for try := 0; ; try++ {
		c := a.findExpandable(size, pool, stream)
		if try < 2 && a.limit > 0 && a.reserved+a.toMap(c, size) > a.limit {
			if try == 0 {
				a.releaseCached()
				continue
			}
			a.oom = true
		}
		if c.unmapped {
			c = a.mapBlock(c, min(c.size, size))
		}
		for c.size < size {
			c = a.mapBlock(c.next, min(size-c.size, c.next.size))
		}
		a.remove(c)
		return c
	}
}

// findExpandable is the lowest-addressed run of free and unmapped blocks
// of at least size in stream's segments of pool, starting with an unmapped
// one or the free block just before it (find_expandable_block); a new
// segment when there is none (each stream has segments of its own).
func (a *allocator) findExpandable(size int64, pool int, stream int32) *block {
	for _, u := range *freeList(&a.unmapped, poolKey(stream, pool)) {
		c := u
		if p := c.prev; p != nil && p.free {
			c = p
		}
		var n int64
		for b := c; b != nil && b.free && n < size; b = b.next {
			n += b.size
		}
		if n >= size {
			return c
		}
	}
	page := expandablePage[pool]
	va := a.va
	if va == 0 {
		va = expandableVA
	}
	va = (max(va, size) + page - 1) / page * page
	a.segments++
	b := &block{seg: a.segments, size: va, pool: pool, stream: stream, free: true, unmapped: true}
	a.segs = append(a.segs, b)
	a.insertUnmapped(b)
	a.tell("reserve", b, va)
	return b
}

// toMap: the bytes mapping from c for size would add.
func (a *allocator) toMap(c *block, size int64) int64 {
	page := expandablePage[c.pool]
	var n int64
	for b := c; b != nil && size > 0; b = b.next {
		take := min(size, b.size)
		if b.unmapped {
			n += (take + page - 1) / page * page
		}
		size -= take
	}
	return n
}

// mapBlock maps the pages covering the first n bytes of the unmapped
// block u, merges them with the free blocks around and returns the free
// block they are part of.
func (a *allocator) mapBlock(u *block, n int64) *block {
	page := expandablePage[u.pool]
	m := min((n+page-1)/page*page, u.size)
	a.removeUnmapped(u)
	if m < u.size {
		a.insertUnmapped(u.splitAt(m))
	}
	u.unmapped = false
	a.reserved += m
	a.peak = max(a.peak, a.reserved)
	a.tell("segment_map", u, m)
	return a.release(u) // merged with the free neighbours, into the free list
}

// unmapFree unmaps the whole pages of every free block (empty_cache).
func (a *allocator) unmapFree() {
	for p := range a.free {
		for _, b := range append([]*block(nil), a.free[p]...) {
			if unmappable(b) > 0 {
				a.unmap(b)
			}
		}
	}
}

// unmappable: the bytes of b's whole pages.
func unmappable(b *block) int64 {
	begin, end := wholePages(b)
	return max(end-begin, 0)
}

// wholePages: where the first page wholly inside b begins and the last
// one ends (end <= begin: none).
func wholePages(b *block) (begin, end int64) {
	page := expandablePage[b.pool]
	return (b.off + page - 1) / page * page, (b.off + b.size) / page * page
}

// unmap gives the whole pages of the free block b back: b splits into a
// free head, the unmapped pages (merged with unmapped neighbours) and a
// free tail, each there only when not empty.
func (a *allocator) unmap(b *block) {
	begin, end := wholePages(b)
	a.remove(b)
	if end < b.off+b.size {
		a.insert(b.splitAt(end - b.off)) // a free tail
	}
	if begin > b.off {
		u := b.splitAt(begin - b.off)
		a.insert(b) // a free head
		b = u
	}
	a.reserved -= b.size
	a.tell("segment_unmap", b, b.size)
	b.unmapped = true
	if p := b.prev; p != nil && p.unmapped {
		a.removeUnmapped(p)
		p.absorbNext()
		b = p
	}
	if n := b.next; n != nil && n.unmapped {
		a.removeUnmapped(n)
		b.absorbNext()
	}
	a.insertUnmapped(b)
}

func (a *allocator) insertUnmapped(b *block) {
	l := freeList(&a.unmapped, b.key())
	*l = insertSorted(*l, b, addrLess)
}

func (a *allocator) removeUnmapped(b *block) {
	l := freeList(&a.unmapped, b.key())
	*l = removeSorted(*l, b, addrLess)
}
