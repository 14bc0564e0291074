package estimate

import "github.com/torchmem/torchmem/internal/allocconf"

// garbage_collection_threshold (allocconf's GCThreshold), as
// c10/cuda/CUDACachingAllocator.cpp's garbage_collect_cached_blocks runs
// it. It acts only when a memory fraction caps the allocator, and never
// on expandable segments (allocconf.Conf.GCIdle).
//
// A block's age is how many times the large pool was searched
// (get_free_block) since the block went into it. When a request finds no
// cached block and reserved is over the threshold's share of the
// fraction's bytes, the allocator gives back the whole free segments of
// the large pool at least as old as their average, again with the
// average of those left, until it has given back what reserved was over
// or nothing more goes: before it asks the driver for a new segment, so
// reserved stays near the threshold while cached memory is there to give.

// gcBytes: reserved over which the allocator collects, for conf's
// threshold and fraction of a GPU of gpuBytes (0: it never does).
func gcBytes(conf allocconf.Conf, gpuBytes int64) int64 {
	if conf.GCThreshold <= 0 || conf.GCIdle() != "" || gpuBytes <= 0 {
		return 0
	}
	return int64(conf.GCThreshold * conf.Fraction * float64(gpuBytes))
}

// collect is garbage_collect_cached_blocks: called when a request needs a
// new segment.
func (a *allocator) collect() {
	if a.gcAt == 0 || a.reserved <= a.gcAt {
		return
	}
	target := a.reserved - a.gcAt
	var totalAge int64
	n := 0
	for _, b := range a.largeFree() {
		if b.wholeSegment() {
			totalAge += a.gcCalls - b.gcBase
			n++
		}
	}
	var freed int64
	for gave := true; freed < target && gave && n > 0; {
		avg := float64(totalAge) / float64(n)
		var drop []*block
		for _, b := range a.largeFree() { // by stream, then size, as c10's set is
			if age := a.gcCalls - b.gcBase; b.wholeSegment() && float64(age) >= avg {
				drop = append(drop, b)
				freed += b.size
				totalAge -= age
				n--
			}
		}
		for _, b := range drop {
			a.dropSegment(b)
		}
		gave = len(drop) > 0
	}
	if freed > 0 {
		a.pruneSegs()
		a.collections++
	}
}

// largeFree: the free blocks of every stream's large pool, by stream and
// then as each list is sorted (c10's one large pool, ordered by stream
// first).
func (a *allocator) largeFree() []*block {
	var out []*block
	for k := 1; k < len(a.free); k += 2 {
		out = append(out, a.free[k]...)
	}
	return out
}
