package estimate

import "github.com/torchmem/torchmem/internal/estimate/models"

// MaxBatchLimit is where MaxBatch stops searching: a batch this large that
// still fits is reported as is (Fit.MaxBatchAtLimit says so).
const MaxBatchLimit = 1 << 16

// bandExact is how many batches below the largest that fits MaxBatch
// checks one by one; further down, while still near the budget, the
// steps double (a bound on the time a search takes: a long generation's
// estimate replays every token; not a bound on its accuracy for any job
// seen so far, whose misses were at most 17 batches below).
const bandExact = 32

// chaosFraction: batches whose peak allocated is within 1/chaosFraction of
// the allocator's limit (or twice the largest allocator overhead seen, if
// more) are checked one by one: the overhead of neighbouring batches
// differs by that much (ViT-B/32 on 3 GB: batch 82 out of memory with 83
// and 84 fitting).
const chaosFraction = 10

// MaxBatch is the largest batch b such that every batch from 1 to b fits
// the budget (0 when batch 1 does not, MaxBatchLimit when that still
// fits), so that a batch the search reports is never followed by a
// smaller one that does not fit.
//
// Memory does not grow monotonically with the batch near the budget: at
// the allocator's limit PyTorch frees its cache and retries, and whether
// that succeeds depends on how the segments happen to be cut, so a batch
// can run out of memory while a larger one does not (seen: Llama-3.2-1B
// in fp32 on 27 GB, 256 tokens: batches 5 and 6 out of memory, 7 and 8
// fitting, the peak allocated the same 24.8 GB for all of them; ViT-B/32
// on 3 GB, batch 22 out of memory and 39 fitting). So MaxBatch finds the
// largest batch that fits by bisection, then checks the batches below it
// one by one while they are within reach of the budget: until a batch's
// peak allocated is further below the allocator's limit than the
// allocator's overhead (reserved less allocated) can vary between
// neighbouring batches (chaosFraction), where the cache can no longer
// decide the outcome. A batch that does not fit
// lowers the answer to the one below it.
func MaxBatch(md *models.Model, o Options, budget int64) int {
	limit := o.limitIn(budget)
	o.AllocatorLimit = limit
	est := func(b int) *Result {
		o2 := o
		o2.Batch = b
		r, err := Estimate(md, o2)
		if err != nil {
			return nil
		}
		return r
	}
	fits := func(b int) bool { r := est(b); return r != nil && fitsIn(r, budget) }
	best := largest(fits, 1, MaxBatchLimit)
	if best <= 1 {
		return best
	}
	var overhead int64
	note := func(r *Result) {
		// A run that released its cache at the limit says nothing of the
		// overhead: its reserved is the limit.
		if r.CacheReleases == 0 {
			overhead = max(overhead, r.PeakReservedBytes-r.PeakAllocatedBytes)
		}
	}
	if r := est(best); r != nil {
		note(r)
	}
	step, checked := 1, 0
	for b := best - 1; b >= 1; b -= step {
		if checked++; checked > bandExact {
			step *= 2
		}
		r := est(b)
		if r == nil || !fitsIn(r, budget) {
			best, step, checked = b-1, 1, 0
			continue
		}
		note(r)
		if settledWith(r, limit, overhead) {
			break
		}
	}
	return best
}

// settledWith: r's peak allocated is far enough below the allocator's
// limit that the cache's behaviour cannot decide whether it fits.
func settledWith(r *Result, limit, overhead int64) bool {
	return r.PeakAllocatedBytes+max(2*overhead, limit/chaosFraction) <= limit
}

// settled is settledWith r's own allocator overhead (none counted when it
// released its cache: its reserved is then the limit).
func settled(r *Result, limit int64) bool {
	var overhead int64
	if r.CacheReleases == 0 {
		overhead = r.PeakReservedBytes - r.PeakAllocatedBytes
	}
	return settledWith(r, limit, overhead)
}

// largest is the largest b in [from, limit] with ok(b), by an exponential
// probe and a bisection (about 2·log2(b) calls), taking ok to hold up to
// some batch and not after; 0 when ok(from) fails, limit when ok(limit)
// holds.
func largest(ok func(int) bool, from, limit int) int {
	if !ok(from) {
		return 0
	}
	lo, hi := from, from*2
	for {
		if hi >= limit {
			if ok(limit) {
				return limit
			}
			hi = limit
			break
		}
		if !ok(hi) {
			break
		}
		lo, hi = hi, hi*2
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if ok(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}
