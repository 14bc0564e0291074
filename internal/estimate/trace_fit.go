package estimate

import (
	"fmt"
	"strconv"
)

// FitTrace replays a trace against a GPU: the allocator limited to what
// the budget leaves after the CUDA context, as Plan does for the built-in
// models. Levers and the largest batch are not searched: a trace is one
// run of one configuration.
func FitTrace(t *Trace, gpu GPU, margin float64) (*TraceResult, *Fit, error) {
	if margin < 0 || margin >= 1 {
		return nil, nil, fmt.Errorf("--margin %.2f: want a fraction in [0, 1)", margin)
	}
	budget := int64(float64(gpu.MemoryBytes) * (1 - margin))
	o := TraceReplay{Limit: allocatorLimit(budget), ComputeCapability: gpu.ComputeCapability}
	r := ReplayTrace(t, o)
	if r.OOM {
		// Past the failure the limited replay means little: show what the
		// job needs on a GPU without a limit.
		o.Limit = 0
		r = ReplayTrace(t, o)
		r.OOM = true
	}
	f := &Fit{GPU: gpu.Name, GPUMemoryBytes: gpu.MemoryBytes, Margin: margin, BudgetBytes: budget}
	f.Fits = fitsIn(r.Result, budget)
	f.HeadroomBytes = budget - r.ProcessBytes
	f.Partial = TracePartial(t, r)
	if r.CacheReleases > 0 && !r.OOM {
		f.Notes = append(f.Notes, fmt.Sprintf("the caching allocator reaches the budget and frees its cache "+
			"to go on (%d times)", r.CacheReleases))
	}
	return r, f, nil
}

// TracePartial: the trace stopped (an op failed, the program was killed,
// the size cap) before the optimizer steps asked for were done. What ran
// may fit while what did not run would not: the first step's peak comes
// before the optimizer's states exist, the second's after. A program that
// ended by itself ("exit") ran everything it does, so it is not partial.
func TracePartial(t *Trace, r *TraceResult) bool {
	asked, err := strconv.Atoi(t.Header["steps"])
	if err != nil {
		asked = int(^uint(0) >> 1) // unknown: any stop is short of it
	}
	return RunPartial(r.End, r.Steps, asked)
}

// RunPartial is TracePartial's rule for a run that ended with end after
// done of asked optimizer steps (estimate --trace --real measures one).
func RunPartial(end *TraceNote, done, asked int) bool {
	if end == nil || end.Kind == "steps" || end.Kind == "exit" {
		return false
	}
	return done < asked
}
