package oomexplain

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
		return VerdictRequestTooLarge, nil
	case overCap(f):
		if f.free >= 0 && f.free < f.req {
			return VerdictMemoryFraction, []Verdict{VerdictDoesNotFit}
		}
		return VerdictMemoryFraction, nil
	case f.roomy() && f.allowed < 0:
		return VerdictGPUOOM, nil
	case f.async:
		return asyncVerdict(f)
	}
	if v, alts, ok := elsewhereVerdict(f); ok {
		return v, alts
	}
	return fitVerdict(f)
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
	case othersCount && (!selfCounts || e >= self):
		v = VerdictOtherProcesses
		if selfCounts || len(f.others) == 0 && f.selfExtra() < 0 {
			// No process list and no "this process has": the message
			// cannot say whose the memory is.
			alts = append(alts, VerdictOutsidePyTorch)
		}
	case selfCounts:
		v = VerdictOutsidePyTorch
		if othersCount {
			alts = append(alts, VerdictOtherProcesses)
		}
	case f.elsewhere() > 0 && f.free+e >= f.req && f.free < f.req:
		// Someone else held a little, and that little was what was missing:
		// the job is at the GPU's edge either way.
		w, a := fitVerdict(f)
		return w, appendUnique(a, VerdictOtherProcesses), true
	default:
		return "", nil, false
	}
	if jobFillsGPU(f) {
		alts = append(alts, VerdictDoesNotFit)
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

func appendUnique(vs []Verdict, v Verdict) []Verdict {
	for _, x := range vs {
		if x == v {
			return vs
		}
	}
	return append(vs, v)
}
