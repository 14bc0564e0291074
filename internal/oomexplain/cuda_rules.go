package oomexplain

import "slices"

// The CUDA decision ladder (docs/oom.md, "Decision rules"), evidence in
// this order: no numbers → one request larger than the GPU → the
// memory-fraction cap → a device with room → memory held outside
// PyTorch's cache → the cache's slack (fragmentation) → the job does not
// fit. Each rule is a pure function of the facts; alternatives are the
// verdicts the numbers cannot rule out.

// cudaVerdict decides an allocator OOM.
func cudaVerdict(f cudaFacts) (Verdict, []Verdict) {
	switch {
	case f.req < 0 || f.free < 0 && f.alloc < 0:
		return VerdictGPUOOM, nil
	case f.total > 0 && f.req > f.total:
		if f.free > f.total {
			// Free above total (unified-memory APUs, a driver's odd
			// figures): the numbers themselves are suspect.
			return VerdictRequestTooLarge, []Verdict{VerdictGPUOOM}
		}
		return VerdictRequestTooLarge, nil
	case overCap(f):
		if f.free >= 0 && f.free < f.req {
			return VerdictMemoryFraction, []Verdict{VerdictDoesNotFit}
		}
		return VerdictMemoryFraction, nil
	case f.roomy() && f.allowed < 0:
		return roomyVerdict(f)
	case f.roomy():
		// Capped while the device had room: the cap is the wall unless
		// the cache's slack under it is the story.
		v, alts := fitVerdict(f)
		if v == VerdictDoesNotFit {
			v = VerdictMemoryFraction
		}
		return v, alts
	case f.async:
		return asyncVerdict(f)
	}
	v, alts := deviceFullVerdict(f)
	if f.free >= 0 && f.free >= f.req {
		// The device reported room, only not enough to spare: a cause
		// outside the allocator's numbers stays possible.
		alts = appendUnique(alts, VerdictGPUOOM)
	}
	return v, alts
}

// deviceFullVerdict: the device had no room for the request. Other
// processes first, then the cache's slack, then this process's own
// non-PyTorch memory, then the job's tensors.
func deviceFullVerdict(f cudaFacts) (Verdict, []Verdict) {
	if v, alts, ok := elsewhereVerdict(f); ok {
		return v, alts
	}
	v, alts := fitVerdict(f)
	e := f.elsewhere()
	littleElsewhere := e > 0 && f.free+e >= f.req && f.free < f.req
	switch self := selfExcess(f); {
	case v == VerdictFragmentation:
		if e >= elsewhereMinBytes {
			alts = appendUnique(alts, VerdictOtherProcesses)
		}
		if f.elsewhereMatters(self) {
			alts = appendUnique(alts, VerdictOutsidePyTorch)
		}
	case f.elsewhereMatters(self) && f.free+self >= f.req:
		v, alts = VerdictOutsidePyTorch, appendUnique(alts, v)
		if littleElsewhere {
			alts = appendUnique(alts, VerdictOtherProcesses)
		}
	case littleElsewhere:
		// Someone else held a little, and that little was what was
		// missing: the job is at the GPU's edge either way.
		alts = appendUnique(alts, VerdictOtherProcesses)
	}
	return v, alts
}

// roomyVerdict: the device had room and no cap is printed. A cap the
// message does not print (2.1/2.2 print "allowed" only in some paths,
// and pasted messages get cut) shows as reserved + request crossing a
// round share of the GPU; otherwise the wall was elsewhere.
func roomyVerdict(f cudaFacts) (Verdict, []Verdict) {
	if _, ok := inferredCap(f); ok {
		return VerdictMemoryFraction, []Verdict{VerdictGPUOOM}
	}
	var alts []Verdict
	if out := f.outside(); out > contextAllowance {
		alts = append(alts, VerdictOtherProcesses)
	}
	if f.total > 0 && float64(f.req) >= largeRequestShare*float64(f.total) {
		// One request of half the card: little else fits beside it.
		alts = append(alts, VerdictDoesNotFit)
	}
	return VerdictGPUOOM, alts
}

// inferredCap finds a memory fraction k/20 of the GPU that PyTorch's
// reserve was under and reserve + request crosses: the cap people set
// (0.5, 0.9, 0.1) that a message without the "allowed" clause hides.
func inferredCap(f cudaFacts) (int64, bool) {
	held := f.held()
	// Only a request small against the step makes a crossing telling: a
	// large one crosses some step wherever the reserve was.
	if f.total <= 0 || held <= 0 || f.req < 0 || f.req*2 >= f.total/capSteps {
		return 0, false
	}
	for k := int64(1); k < capSteps; k++ {
		c := f.total * k / capSteps
		if held <= c+capSlack && held+f.req > c {
			return c, true
		}
	}
	return 0, false
}

// overCap: live tensors and the request exceed the memory-fraction cap by
// themselves (the cache's slack cannot be what stopped it).
func overCap(f cudaFacts) bool {
	return f.allowed >= 0 && f.req >= 0 && max(f.alloc, 0)+f.req > f.allowed-capSlack
}

// slack: the bytes existed in PyTorch's cache (reserved but unallocated)
// but a new segment could not be had: the request needed the slack.
func slack(f cudaFacts) bool {
	room := f.newRoom()
	return room >= 0 && f.unalloc > 0 && room < f.req && f.req <= room+f.unalloc
}

// fitVerdict: the job's own tensors against what PyTorch could reach.
func fitVerdict(f cudaFacts) (Verdict, []Verdict) {
	fill := f.fill()
	switch {
	case !slack(f):
		return VerdictDoesNotFit, nil
	case fill < 0:
		// The slack was needed, but how full the GPU was is not known.
		return VerdictFragmentation, []Verdict{VerdictDoesNotFit}
	case fill <= fragmentationFill:
		return VerdictFragmentation, nil
	case fill <= doesNotFitFill && float64(f.unalloc) >= largeSlackShare*float64(f.reachable()):
		// A very large slack: the allocator's layout is the first thing to fix.
		return VerdictFragmentation, []Verdict{VerdictDoesNotFit}
	case fill <= doesNotFitFill:
		return VerdictDoesNotFit, []Verdict{VerdictFragmentation}
	}
	return VerdictDoesNotFit, nil
}

// elsewhereVerdict: memory held outside this process's cache (other
// processes, or this process's non-PyTorch memory) without which the
// request would have fit. ok is false when that is not the story.
func elsewhereVerdict(f cudaFacts) (Verdict, []Verdict, bool) {
	e := f.elsewhere()
	self := selfExcess(f)
	if f.free < 0 || f.req < 0 {
		return "", nil, false
	}
	othersCount := f.elsewhereMatters(e) && f.free+e >= f.req
	selfCounts := f.elsewhereMatters(self) && f.free+self >= f.req
	var v Verdict
	var alts []Verdict
	switch {
	case othersCount:
		v = VerdictOtherProcesses
		if selfCounts {
			alts = append(alts, VerdictOutsidePyTorch)
		}
		if len(f.others) == 0 && f.selfExtra() < 0 {
			// No process list and no "this process has": the message
			// cannot say whose the memory is, nor rule out the driver.
			alts = append(alts, VerdictOutsidePyTorch, VerdictGPUOOM)
		}
	default:
		return "", nil, false
	}
	if jobFillsGPU(f) || f.fill() > doesNotFitFill {
		alts = appendUnique(alts, VerdictDoesNotFit)
	}
	if slack(f) {
		alts = append(alts, VerdictFragmentation)
	}
	return v, alts, true
}

// selfExcess is this process's non-PyTorch memory beyond a normal
// context, when the message prints the process's total; 0 otherwise.
func selfExcess(f cudaFacts) int64 {
	if s := f.selfExtra(); s > contextAllowance {
		return s - contextAllowance
	}
	return 0
}

// jobFillsGPU: even alone on the GPU, the job's tensors and request would
// fill it.
func jobFillsGPU(f cudaFacts) bool {
	if f.total <= 0 || f.alloc < 0 {
		return false
	}
	alone := f.total - contextAllowance
	return float64(f.alloc+f.req) > doesNotFitFill*float64(alone)
}

// asyncVerdict: the cudaMallocAsync backend prints live bytes but not its
// pool's cache, so the gap between the device's use and the live tensors
// is the pool's cached blocks, a context, or other processes, and the
// message cannot tell which.
func asyncVerdict(f cudaFacts) (Verdict, []Verdict) {
	if f.total <= 0 || f.free < 0 || f.alloc < 0 {
		return VerdictDoesNotFit, nil
	}
	fill := f.fill()
	gap := max(0, f.total-f.free-f.alloc-contextAllowance)
	switch {
	case fill > doesNotFitFill && f.total-f.free-f.alloc >= elsewhereMinBytes:
		// Full, but a GiB or more is neither free nor live: name it.
		return VerdictDoesNotFit, []Verdict{VerdictFragmentation, VerdictOtherProcesses}
	case fill > doesNotFitFill:
		return VerdictDoesNotFit, nil
	case f.elsewhereMatters(gap) && f.free+gap >= f.req && len(f.others) > 0:
		return VerdictOtherProcesses, []Verdict{VerdictFragmentation}
	case f.elsewhereMatters(gap) && f.free+gap >= f.req:
		return VerdictFragmentation, []Verdict{VerdictOtherProcesses}
	case fill > fragmentationFill:
		return VerdictDoesNotFit, []Verdict{VerdictFragmentation}
	}
	return VerdictDoesNotFit, nil
}

func appendUnique(vs []Verdict, add ...Verdict) []Verdict {
	for _, v := range add {
		if !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	return vs
}
