package estimate

import (
	"sort"
	"strconv"
	"strings"
)

// A trace is one run of one configuration: the built-in's levers (another
// estimate with one option changed) have no counterpart, since the
// program's flags are its own. What a change would do to the allocations
// the trace recorded can still be replayed: the same events, the
// allocations the change resizes resized. Each lever here is such a
// what-if, offered when it saves at least minTraceLeverSaving.

// minTraceLeverSaving: below it a change is not worth a line (and within
// the replay's own error on a real GPU).
const minTraceLeverSaving = 64 << 20

// bnbMin8bitElems is bitsandbytes' min_8bit_size: smaller tensors keep
// 32-bit states under its 8-bit optimizers.
const bnbMin8bitElems = 4096

// bnbBlock is the block of its blockwise quantization: one float32 absmax
// per 256 values.
const bnbBlock = 256

// traceWhatIf is one change: applies says whether the trace has what it
// changes; resize gives, for the trace, each allocation's bytes under it
// (0: not made).
type traceWhatIf struct {
	lever, change string
	applies       func(*Trace) bool
	resize        func(*Trace) func(*TraceAlloc) int64
}

// The resizing levers' names.
const (
	eightBitLever  = "8bit-optimizer"
	fusedLever     = "fused-optimizer"
	halfBatchLever = "half-batch-accum"
)

var traceWhatIfs = []traceWhatIf{
	{eightBitLever, "bitsandbytes 8-bit (bnb.optim.AdamW8bit, SGD8bit; Trainer optim=adamw_bnb_8bit; diffusers --use_8bit_adam)",
		hasFloat32States, same(eightBitStates)},
	{fusedLever, "fused=True on the optimizer (torch.optim.AdamW and Adam, torch >= 2.0; SGD, torch >= 2.3; Trainer optim=adamw_torch_fused)",
		hasKind("opttemp"), same(without("opttemp"))},
	{halfBatchLever, "batch/2, gradient accumulation x2 (the same effective batch; what the batch makes halved in the replay: trace again with it to confirm)",
		hasBatchToHalve, halfBatch},
	{loadToHostLever, "torch.load(..., map_location=\"cpu\") (load_state_dict copies what it loaded into the parameters on the GPU), or del what it loaded once used",
		hasKind("loaded"), same(without("loaded"))},
}

// loadToHostLever: a checkpoint loaded with map_location on the GPU and
// kept (a state dict in a variable the script never deletes) holds its
// size on the GPU for the whole run; loaded to the host, load_state_dict
// copies it into the parameters and the GPU holds nothing more. The what-if
// makes none of torch.load's allocations still of its kind (those that
// became parameters or states are the job's own).
const loadToHostLever = "load-to-host"

// hasKind: the trace has an allocation of kind.
func hasKind(kind string) func(*Trace) bool {
	return func(t *Trace) bool { return anyAlloc(t, func(a *TraceAlloc) bool { return a.Kind == kind }) }
}

// without: the allocations of kind not made (fused-optimizer: a fused
// step updates weights and states in place, making none of the foreach
// path's temporaries, a list of them per op; load-to-host: torch.load's).
func without(kind string) func(*TraceAlloc) int64 {
	return func(a *TraceAlloc) int64 {
		if a.Kind == kind {
			return 0
		}
		return a.Bytes
	}
}

// TraceLevers replays t once for each change that applies, and each
// retrace that ran through as it is, and ranks those that save memory
// against base (FitTrace's replay of the trace as it is) on budget, as the
// built-in's levers are ranked; the retraces that are no lever, and why.
func TraceLevers(t *Trace, base *Result, o TraceReplay, budget int64, retraces []Retrace) ([]Lever, []RetraceNotOffered) {
	out := []Lever{}
	offer := func(lever, change string, r *Result, modules []string) *Lever {
		saved := base.ProcessBytes - r.ProcessBytes
		if saved < minTraceLeverSaving {
			return nil
		}
		out = append(out, Lever{Lever: lever, Change: change, ProcessBytes: r.ProcessBytes,
			SavedBytes: saved, Fits: fitsIn(r, budget), Modules: modules})
		return &out[len(out)-1]
	}
	var c *Trace // one copy for every what-if: its sizes are set anew each time
	var cats []Category
	for _, w := range traceWhatIfs {
		if !w.applies(t) {
			continue
		}
		if c == nil {
			cp := *t
			cp.Allocs = append([]TraceAlloc(nil), t.Allocs...)
			c, cats = &cp, t.categories()
		}
		resize := w.resize(t)
		for i := range c.Allocs {
			c.Allocs[i].Bytes = resize(&t.Allocs[i])
		}
		offer(w.lever, w.change, replayResized(c, cats, o), nil)
	}
	for _, w := range traceEventWhatIfs {
		if e, modules := w.edit(t); e != nil {
			offer(w.lever, w.change, replayResized(e, e.categories(), o), modules)
		}
	}
	if canExpand(t) {
		oe := o
		oe.expandable = true
		offer(expandableLever, expandableChange, replayResized(t, t.categories(), oe), nil)
	}
	if t.Alloc.MaxSplit > 0 && !t.Alloc.AsyncBackend {
		on := o
		on.noMaxSplit = true
		offer(noMaxSplitLever, noMaxSplitChange, replayResized(t, t.categories(), on), nil)
	}
	var not []RetraceNotOffered
	for _, rt := range retraces {
		if end := rt.failed(); end != nil {
			not = append(not, RetraceNotOffered{Lever: rt.Lever, End: end})
			continue
		}
		r := replayResized(rt.Trace, rt.Trace.categories(), o)
		if l := offer(rt.Lever, rt.Change, r, nil); l != nil {
			l.Retraced = true
		} else {
			not = append(not, RetraceNotOffered{Lever: rt.Lever, ProcessBytes: r.ProcessBytes})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].SavedBytes > out[j].SavedBytes })
	return out, not
}

// traceEventWhatIf is a change that moves and repeats the trace's events
// instead of resizing its allocations: edit gives the trace with the
// change made (nil: nothing to change) and the modules it changes.
type traceEventWhatIf struct {
	lever, change string
	edit          func(*Trace) (*Trace, []string)
}

var traceEventWhatIfs = []traceEventWhatIf{
	{ckptLever, ckptChange, checkpointWhatIf},
	{gradsLever, gradsChange, func(t *Trace) (*Trace, []string) { return t.gradsToNone(), nil }},
	{noGradLever, noGradChange, noGradWhatIf},
}

// replayResized replays c (a copy of a trace, resized or edited) with
// cats; where the budget's limit runs out, the unlimited replay's figures
// (as FitTrace), marked OOM. A resize keeps the original's categories.
func replayResized(c *Trace, cats []Category, o TraceReplay) *Result {
	m, _, _, _ := c.replay(cats, o, -1, nil)
	r := c.result(cats, m)
	if r.OOM {
		o.Limit = 0
		m, _, _, _ = c.replay(cats, o, -1, nil)
		r = c.result(cats, m)
		r.OOM = true
	}
	return r
}

// same: a resize that needs nothing of the trace but the allocation.
func same(f func(*TraceAlloc) int64) func(*Trace) func(*TraceAlloc) int64 {
	return func(*Trace) func(*TraceAlloc) int64 { return f }
}

func anyAlloc(t *Trace, f func(*TraceAlloc) bool) bool {
	for i := range t.Allocs {
		if f(&t.Allocs[i]) {
			return true
		}
	}
	return false
}

// eightBitCandidate: a float32 optimizer state bitsandbytes would keep in
// 8 bits (bnbMin8bitElems values or more).
func eightBitCandidate(a *TraceAlloc) bool {
	return a.Kind == "optstate" && a.DType == "float32" && a.Bytes/4 >= bnbMin8bitElems
}

func hasFloat32States(t *Trace) bool { return anyAlloc(t, eightBitCandidate) }

// eightBitStates: each float32 state of bnbMin8bitElems or more becomes a
// byte a value and a float32 absmax a block; bitsandbytes' update runs in
// place, tensor by tensor, so the step's temporaries go.
func eightBitStates(a *TraceAlloc) int64 {
	switch {
	case eightBitCandidate(a):
		n := a.Bytes / 4
		return n + 4*((n+bnbBlock-1)/bnbBlock)
	case a.Kind == "opttemp":
		return 0
	}
	return a.Bytes
}

// hasBatchToHalve: input data with a first dimension of 2 or more (the
// batch, in the layouts scripts use; a batch of 1 has nothing to halve)
// that a backward was run on (alive when it began): what only an
// evaluation or a sample reads (CycleGAN's five validation images beside
// its batch of 1) is no training batch.
func hasBatchToHalve(t *Trace) bool {
	survived := t.survivedToBackward()
	for i := range t.Allocs {
		a := &t.Allocs[i]
		first, _, _ := strings.Cut(a.Shape, ",")
		if n, err := strconv.Atoi(first); a.Kind == "data" && err == nil && n >= 2 && survived[i] {
			return true
		}
	}
	return false
}

// halfBatch: what the forward and the backward make (activations, their
// gradients, temporaries) and the input data are halved. The weights,
// gradients, optimizer states, autocast's weight copies, the step's
// temporaries and what the program made outside a pass (a cache it keeps,
// a model copy) do not depend on the batch; nor does what a pass makes in
// a weight's shape (a weight's gradient before it is added to .grad, a
// transposed copy), nor an unused graph (an evaluation's or a sample's
// forward: its batch is its own).
func halfBatch(t *Trace) func(*TraceAlloc) int64 {
	weights := map[string]bool{}
	for i := range t.Allocs {
		a := &t.Allocs[i]
		if a.Kind == "param" || a.Kind == "grad" {
			weights[a.Shape] = true
			weights[transposed(a.Shape)] = true
		}
	}
	return func(a *TraceAlloc) int64 {
		switch a.Kind {
		case "fwd", "bwd", "data":
			// (an unused graph is an evaluation's or a sample's, whose
			// batch is its own)
			if !weights[a.Shape] && !a.Unused {
				return (a.Bytes + 1) / 2
			}
		}
		return a.Bytes
	}
}

// transposed: a 2-D shape "m,n" as "n,m"; others as they are.
func transposed(shape string) string {
	m, n, ok := strings.Cut(shape, ",")
	if !ok || strings.Contains(n, ",") {
		return shape
	}
	return n + "," + m
}

// canExpand: the job's allocator could take expandable segments (it has
// none, and is PyTorch's own, not cudaMallocAsync).
func canExpand(t *Trace) bool {
	return !t.Alloc.Expandable && !t.Alloc.AsyncBackend
}
