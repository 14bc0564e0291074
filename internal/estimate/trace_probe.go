package estimate

// A probe before the training: a program that measures its own memory
// before it trains (Ultralytics' AutoBatch profiles forward passes at
// batch 1 to 16, then calls empty_cache() and trains at the batch it
// picked) can peak in the probe, above the training it then runs. On a
// GPU too small for a probe batch, AutoBatch catches the CUDA
// out-of-memory error and goes on; a program that does not, stops there.
// So the fit keeps the whole run's peak (torch.cuda.max_memory_allocated
// on the GPU is that one) and says the training steps' beside it.

// TraceProbe: the training steps' figures after a probe the peak is in
// (Fit.Probe), each as the whole run's are.
type TraceProbe struct {
	PeakAllocatedBytes int64 `json:"peak_allocated_bytes"`
	PeakReservedBytes  int64 `json:"peak_reserved_bytes"`
	ProcessBytes       int64 `json:"process_bytes"`
	OOM                bool  `json:"oom"`
	Fits               bool  `json:"fits"`
	HeadroomBytes      int64 `json:"headroom_bytes"`
}

// probeEnd: the event at which a probe holding the peak (the event
// peakAt) ends: the last empty_cache() before the first optimizer step
// that comes after the peak, with a forward before the peak and the
// training's backward between it and the step (a program that empties
// the cache between its backward and its step has no probe). 0: none.
func probeEnd(t *Trace, peakAt int) int {
	step := -1
	for _, p := range t.phases {
		if p.phase == "optimizer" {
			step = p.at
			break
		}
	}
	if peakAt < 0 || step < 0 || peakAt >= step {
		return 0
	}
	end := 0
	for _, e := range t.emptied {
		if e > peakAt && e <= step {
			end = e
		}
	}
	if end == 0 || !t.phaseIn("forward", 0, peakAt+1) || !t.phaseIn("backward", end, step) {
		return 0
	}
	return end
}

// phaseIn: a phase begins at an event in [from, to).
func (t *Trace) phaseIn(phase string, from, to int) bool {
	for _, p := range t.phases {
		if p.phase == phase && p.at >= from && p.at < to {
			return true
		}
	}
	return false
}

// traceProbe replays t with the peaks counted from the training's first
// allocation after the probe (o's limit, the budget's) and fits what
// follows; nil when the peak is in no probe or the training needs as
// much. The probe's tensors, freed by then, leave their segments cached;
// what the training needs is counted without them, as the allocator gives
// them back at the GPU's limit before it fails.
func traceProbe(t *Trace, r *TraceResult, o TraceReplay, budget int64, c *AllocatorCap) *TraceProbe {
	end := probeEnd(t, r.peakAt)
	for end > 0 && end < len(t.events) && t.events[end].free {
		end++
	}
	if end == 0 || end == len(t.events) {
		return nil
	}
	o.peaksFrom = end
	after := replayResized(t, t.categories(), o)
	if after.ProcessBytes >= r.ProcessBytes {
		return nil
	}
	return &TraceProbe{PeakAllocatedBytes: after.PeakAllocatedBytes, PeakReservedBytes: after.PeakReservedBytes,
		ProcessBytes: after.ProcessBytes, OOM: after.OOM, Fits: fitsIn(after, budget),
		HeadroomBytes: headroom(after, budget, c)}
}
