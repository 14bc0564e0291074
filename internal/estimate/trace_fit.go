package estimate

import (
	"fmt"
	"strconv"
	"strings"
)

// FitTrace replays a trace against a GPU: the allocator limited to what
// the budget leaves after the CUDA context, as Plan does for the built-in
// models. The levers are what-if replays of the same trace (TraceLevers);
// the largest batch is not searched: a trace is one run of one
// configuration. retraces are levers found by tracing the program again
// with a change made (the amp lever): each that ran through is replayed
// as the trace is; one that failed or saved too little is said in
// RetracesNotOffered.
func FitTrace(t *Trace, gpu GPU, margin float64, retraces ...Retrace) (*TraceResult, *Fit, error) {
	if margin < 0 || margin >= 1 {
		return nil, nil, fmt.Errorf("--margin %.2f: want a fraction in [0, 1)", margin)
	}
	budget, limited := traceBudget(t, gpu, margin)
	o := limited
	r := ReplayTrace(t, o)
	if r.OOM {
		// Past the failure the limited replay means little: show what the
		// job needs on a GPU without a limit.
		o.Limit = 0
		r = ReplayTrace(t, o)
		r.OOM = true
	}
	f := &Fit{GPU: gpu.Name, GPUMemoryBytes: gpu.MemoryBytes, Margin: margin, BudgetBytes: budget}
	f.Cap = traceCap(t, gpu, budget)
	f.Fits = fitsIn(r.Result, budget)
	f.OOMInMarginOnly = marginOnly(r.Result, gpu, f.Cap)
	f.Probe = traceProbe(t, r, limited, budget, f.Cap)
	f.HeadroomBytes = headroom(r.Result, budget, f.Cap)
	f.Partial = TracePartial(t, r)
	if ProgramRefused(r.End) {
		f.ProgramRefused, f.Fits = true, false
	}
	f.Levers, f.RetracesNotOffered = TraceLevers(t, r.Result, limited, budget, retraces)
	if !f.Fits && !f.Partial && !f.ProgramRefused {
		f.TracePlan = PlanTrace(t, gpu, margin, retraces, DefaultPlanTop)
	}
	if r.CacheReleases > 0 && !r.OOM {
		f.Notes = append(f.Notes, fmt.Sprintf("the caching allocator reaches its limit and frees its cache "+
			"to go on (%d times)", r.CacheReleases))
		f.NoteKinds = append(f.NoteKinds, Note{NoteLimitReleases, []int{r.CacheReleases}})
	}
	return r, f, nil
}

// traceBudget: what the job must stay under on gpu with margin, and the
// replay limited to what that leaves after the CUDA context, or to the
// job's own cap (traceCap) when lower.
func traceBudget(t *Trace, gpu GPU, margin float64) (int64, TraceReplay) {
	budget := int64(float64(gpu.MemoryBytes) * (1 - margin))
	o := TraceReplay{Limit: allocatorLimit(budget), ComputeCapability: gpu.ComputeCapability, GPUBytes: gpu.MemoryBytes}
	if c := traceCap(t, gpu, budget); c != nil {
		o.Limit = c.Bytes
	}
	return budget, o
}

// traceCap: the cap the job puts on PyTorch's allocator
// (set_per_process_memory_fraction, per_process_memory_fraction), when it
// is under what the budget leaves it: allowed_memory_maximum, the
// fraction of the GPU's whole memory that reserved may not pass. nil: no
// such cap.
func traceCap(t *Trace, gpu GPU, budget int64) *AllocatorCap {
	f, byProgram := t.MemoryFraction()
	return allocatorCap(f, byProgram, gpu, budget)
}

// allocatorCap: a cap of fraction f of gpu (set by the program or not),
// when under what budget leaves the allocator; nil otherwise.
func allocatorCap(f float64, byProgram bool, gpu GPU, budget int64) *AllocatorCap {
	bytes := int64(f * float64(gpu.MemoryBytes))
	if f <= 0 || bytes >= allocatorLimit(budget) {
		return nil
	}
	c := &AllocatorCap{Fraction: f, Bytes: max(1, bytes), Source: CapByEnv}
	if byProgram {
		c.Source = CapByProgram
	}
	return c
}

// gpuTooSmall: what programs raise when, having read the GPU's free
// memory (torch.cuda.mem_get_info, which the trace answers as --gpu's),
// they find the job too large and stop before allocating it: transformers'
// bitsandbytes quantizers when device_map="auto" left modules on the CPU
// or the disk ("Make sure you have enough GPU RAM to fit the quantized
// model": a 70B QLoRA on a 24 GB card), or a program's own out-of-memory
// check (no real allocation fails in a trace). Lower case.
var gpuTooSmall = []string{"enough gpu ram", "out of memory"}

// ProgramRefused: the program itself raised because the GPU's memory is
// too small for the job (gpuTooSmall), an error of its own, not an op's.
func ProgramRefused(end *TraceNote) bool {
	if end == nil || end.Kind != "error" || end.Op != "" {
		return false
	}
	m := strings.ToLower(end.Message)
	for _, s := range gpuTooSmall {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
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
