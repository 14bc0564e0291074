package estimate

import (
	"fmt"
	"math"
	"slices"
	"sort"
)

// A trace's plan: when no lever alone makes the job fit (a 7B full
// fine-tune wants checkpointing and 8-bit states and mixed precision),
// combinations of the trace's levers, replayed together, the fastest
// first. Each lever composes with the others: the amp retrace is a trace
// of its own, on which the event what-ifs (checkpoint, then grads-to-none)
// move events, and the resizes (the optimizer's, half the batch) resize
// what the edited trace allocates.

// The relative time of each lever, by the built-in plan's cost model
// (plan.go): checkpointing runs each block's forward once more (a
// backward costs two forwards); autocast's bf16 GEMMs against fp32 ones;
// half the batch with twice the micro-steps pays each micro-step's
// overhead twice (microStepTokens: about 10% at 4,096 tokens a
// micro-step, a trace's batch being unknown in tokens). The optimizer's
// levers and grads-to-none change a small share of a step: taken as free.
const (
	ckptTraceCost      = (2*passFwd + passBwd) / (passFwd + passBwd)
	ampTraceCost       = autocastSlowdown / fp32Slowdown
	halfBatchTraceCost = 1.1
)

// TracePlan is the combinations of a trace's levers that fit, fastest
// first, and how many combinations were replayed to find them.
type TracePlan struct {
	Replayed     int                `json:"configurations_replayed"`
	Combinations []TraceCombination `json:"combinations"`
}

// TraceCombination is levers applied together (their names as in
// Fit.Levers), what they need, and the time of an optimizer step against
// the job as given (lower is faster).
type TraceCombination struct {
	Levers             []string `json:"levers"`
	Modules            []string `json:"modules,omitempty"` // what checkpoint checkpoints
	PeakAllocatedBytes int64    `json:"peak_allocated_bytes"`
	ProcessBytes       int64    `json:"process_bytes"`
	Cost               float64  `json:"cost"`
}

// traceCandidate is one combination before its replay.
type traceCandidate struct {
	base    int // 0: the trace; i > 0: retraces[i-1]
	ckpt    bool
	grads   bool
	opt     string // "", fused-optimizer or 8bit-optimizer
	halfBat bool
	host    bool // load-to-host
	cost    float64
	nLevers int
}

// PlanTrace replays combinations of t's levers and the retraces that ran
// through (each a base the others apply to) on the GPU with margin, in
// the order of their cost, until top fit.
func PlanTrace(t *Trace, gpu GPU, margin float64, retraces []Retrace, top int) *TracePlan {
	budget, o := traceBudget(t, gpu, margin)
	bases := planBases(t, retraces)
	edits := map[[3]int]*planEdit{}
	p := &TracePlan{Combinations: []TraceCombination{}}
	for _, c := range traceCandidates(bases) {
		e := edited(edits, bases, c)
		if e == nil || !e.resized(c) {
			continue
		}
		// under the budget's limit only: a combination that runs out of
		// it does not fit, and the plan needs no more of it
		m, _, _, _ := e.copy.replay(e.cats, o, -1, nil)
		r := e.copy.result(e.cats, m)
		p.Replayed++
		levers := c.levers(bases)
		if !fitsIn(r, budget) && canExpand(t) {
			// the same allocations in expandable segments: no slower,
			// tried only where the segments as they are do not fit
			oe := o
			oe.expandable = true
			m, _, _, _ = e.copy.replay(e.cats, oe, -1, nil)
			r = e.copy.result(e.cats, m)
			p.Replayed++
			levers = append(levers, expandableLever)
		}
		if !fitsIn(r, budget) || p.dominated(r.ProcessBytes) {
			continue
		}
		p.Combinations = append(p.Combinations, TraceCombination{Levers: levers, Modules: e.modules,
			PeakAllocatedBytes: r.PeakAllocatedBytes, ProcessBytes: r.ProcessBytes, Cost: math.Round(100*c.cost) / 100})
		if len(p.Combinations) == top {
			break
		}
	}
	return p
}

// planBases: the trace, and the retraces that ran through (each a base
// the other levers apply to).
func planBases(t *Trace, retraces []Retrace) []Retrace {
	bases := []Retrace{{Trace: t}}
	for _, rt := range retraces {
		if rt.failed() == nil {
			bases = append(bases, rt)
		}
	}
	return bases
}

// dominated: a combination already kept, as fast or faster, needs no
// more memory. The plan is the frontier: each slower combination needs
// less (a lever that adds nothing, AdamW(fused=True) where the peak is not
// the step's, is never in it).
func (p *TracePlan) dominated(process int64) bool {
	n := len(p.Combinations)
	return n > 0 && p.Combinations[n-1].ProcessBytes <= process
}

// traceCandidates: every combination of the levers but none at all, the
// cheapest first, then the fewest levers (the same cost with less to
// change), in a fixed order.
func traceCandidates(bases []Retrace) []traceCandidate {
	var out []traceCandidate
	hosts := []bool{false}
	if t := bases[0].Trace; t != nil && hasKind("loaded")(t) { // (a checkpoint torch.load put on the GPU)
		hosts = append(hosts, true)
	}
	for b := range bases {
		for _, ckpt := range []bool{false, true} {
			for _, grads := range []bool{false, true} {
				for _, opt := range []string{"", fusedLever, eightBitLever} {
					for _, half := range []bool{false, true} {
						for _, host := range hosts {
							c := traceCandidate{base: b, ckpt: ckpt, grads: grads, opt: opt, halfBat: half, host: host, cost: 1}
							c.score()
							if c.nLevers > 0 {
								out = append(out, c)
							}
						}
					}
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].cost != out[j].cost {
			return out[i].cost < out[j].cost
		}
		return out[i].nLevers < out[j].nLevers
	})
	return out
}

// score sets c's cost and the number of its levers.
func (c *traceCandidate) score() {
	if c.base > 0 {
		c.cost *= ampTraceCost
		c.nLevers++
	}
	if c.ckpt {
		c.cost *= ckptTraceCost
		c.nLevers++
	}
	if c.halfBat {
		c.cost *= halfBatchTraceCost
		c.nLevers++
	}
	if c.grads {
		c.nLevers++
	}
	if c.opt != "" {
		c.nLevers++
	}
	if c.host {
		c.nLevers++ // (setup only: free)
	}
}

// levers names c's levers in the order the report lists them.
func (c traceCandidate) levers(bases []Retrace) []string {
	var out []string
	if c.base > 0 {
		out = append(out, bases[c.base].Lever)
	}
	if c.ckpt {
		out = append(out, ckptLever)
	}
	if c.grads {
		out = append(out, gradsLever)
	}
	if c.opt != "" {
		out = append(out, c.opt)
	}
	if c.halfBat {
		out = append(out, halfBatchLever)
	}
	if c.host {
		out = append(out, loadToHostLever)
	}
	return out
}

// resizes: the resizing levers of c (traceWhatIfs'), in the order they
// apply.
func (c traceCandidate) resizes() []string {
	var out []string
	if c.opt != "" {
		out = append(out, c.opt)
	}
	if c.halfBat {
		out = append(out, halfBatchLever)
	}
	if c.host {
		out = append(out, loadToHostLever)
	}
	return out
}

// planEdit is a base with its event what-ifs made (nil: they do not
// apply), a copy of its allocations to resize, and each resizing lever's
// resize of it, made once (nil: the lever does not apply).
type planEdit struct {
	t       *Trace
	modules []string
	cats    []Category
	copy    *Trace
	resize  map[string]func(*TraceAlloc) int64
}

// edited is c's base with c's event what-ifs, made once for each
// combination of them (a nil entry: they do not apply).
func edited(memo map[[3]int]*planEdit, bases []Retrace, c traceCandidate) *planEdit {
	key := [3]int{c.base, b2i(c.ckpt), b2i(c.grads)}
	if e, ok := memo[key]; ok {
		return e
	}
	t, modules := bases[c.base].Trace, []string(nil)
	if c.ckpt {
		t, modules = checkpointWhatIf(t)
	}
	if t != nil && c.grads {
		t = t.gradsToNone()
	}
	var e *planEdit
	if t != nil {
		cp := *t
		cp.Allocs = append([]TraceAlloc(nil), t.Allocs...)
		e = &planEdit{t: t, modules: modules, cats: t.categories(), copy: &cp, resize: map[string]func(*TraceAlloc) int64{}}
	}
	memo[key] = e
	return e
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// resizeOf: the resize of e by the lever of traceWhatIfs named, nil when
// it does not apply to e's trace.
func (e *planEdit) resizeOf(lever string) func(*TraceAlloc) int64 {
	if f, ok := e.resize[lever]; ok {
		return f
	}
	var f func(*TraceAlloc) int64
	for _, w := range traceWhatIfs {
		if w.lever == lever && w.applies(e.t) {
			f = w.resize(e.t)
		}
	}
	e.resize[lever] = f
	return f
}

// resized sets e's copy to c's resizes of e, each applied to what the one
// before left; false when one of them does not apply.
func (e *planEdit) resized(c traceCandidate) bool {
	var fs []func(*TraceAlloc) int64
	for _, l := range c.resizes() {
		f := e.resizeOf(l)
		if f == nil {
			return false
		}
		fs = append(fs, f)
	}
	for i := range e.copy.Allocs {
		a := e.t.Allocs[i]
		for _, f := range fs {
			a.Bytes = f(&a)
		}
		e.copy.Allocs[i].Bytes = a.Bytes
	}
	return true
}

// traceLeverNames: what TraceCombined takes, for its errors.
const traceLeverNames = "checkpoint, grads-to-none, fused-optimizer or 8bit-optimizer, half-batch-accum, load-to-host, expandable-segments; " +
	"amp-bf16 or amp-fp16 when the program trains in float32 and was traced again under autocast"

// CheckTraceLevers says which of names is no lever of a trace (before the
// trace runs: whether each applies is known after).
func CheckTraceLevers(names []string) error {
	for _, l := range names {
		switch l {
		case ckptLever, gradsLever, fusedLever, eightBitLever, halfBatchLever, loadToHostLever, ampLeverBF16, ampLeverFP16, expandableLever:
		default:
			return fmt.Errorf("lever %q: not one of a trace's (%s)", l, traceLeverNames)
		}
	}
	return nil
}

// TraceCombined replays t with the levers named (as in Fit.Levers; the
// amp lever one of retraces) applied together, fitting or not: what the
// plan would say of that combination. An error names a lever unknown or
// not applicable to t.
func TraceCombined(t *Trace, gpu GPU, margin float64, retraces []Retrace, levers ...string) (*TraceCombination, error) {
	bases := planBases(t, retraces)
	c := traceCandidate{cost: 1}
	expand := false
	for _, l := range levers {
		switch l {
		case ckptLever:
			c.ckpt = true
		case gradsLever:
			c.grads = true
		case fusedLever, eightBitLever:
			if c.opt != "" && c.opt != l {
				return nil, fmt.Errorf("levers %q and %q: one optimizer or the other", c.opt, l)
			}
			c.opt = l
		case halfBatchLever:
			c.halfBat = true
		case loadToHostLever:
			c.host = true
		case expandableLever:
			if !canExpand(t) {
				return nil, fmt.Errorf("lever %q: the job's allocator has expandable segments already (or is cudaMallocAsync)", l)
			}
			expand = true
		default:
			i := slices.IndexFunc(bases, func(r Retrace) bool { return r.Lever == l })
			if i < 1 {
				return nil, fmt.Errorf("lever %q: not one of the trace's (%s)", l, traceLeverNames)
			}
			c.base = i
		}
	}
	c.score()
	e := edited(map[[3]int]*planEdit{}, bases, c)
	if e == nil || !e.resized(c) {
		return nil, fmt.Errorf("levers %v: not all of them apply to the trace", levers)
	}
	_, o := traceBudget(t, gpu, margin)
	o.expandable = expand
	r := replayResized(e.copy, e.cats, o) // what it needs, fitting or not
	names := c.levers(bases)
	if expand {
		names = append(names, expandableLever)
	}
	return &TraceCombination{Levers: names, Modules: e.modules, PeakAllocatedBytes: r.PeakAllocatedBytes,
		ProcessBytes: r.ProcessBytes, Cost: math.Round(100*c.cost) / 100}, nil
}
