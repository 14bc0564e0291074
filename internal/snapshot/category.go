package snapshot

// Category is what an allocation holds, inferred the way PyTorch's
// profiler memory timeline and Mosaic do: from its stack, the phase it was
// made in and how long it lived.
type Category uint8

// Categories, in the order tables list them.
const (
	CatParameters Category = iota
	CatGradients
	CatOptimizerState
	CatActivations
	CatAutogradTemporaries
	CatInputs
	CatOther
	nCategories
)

var categoryNames = [...]string{"parameters", "gradients", "optimizer state", "activations",
	"autograd temporaries", "inputs", "other"}

// String is the category's name as the CLI and the JSON write it.
func (c Category) String() string { return categoryNames[c] }

// MarshalText writes the name.
func (c Category) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// Confidence says how sure a category is: high when a frame or the
// allocator trace shows it directly, medium when it follows from the phase
// and lifetime, low when it is a guess.
type Confidence string

// Confidences.
const (
	High   Confidence = "high"
	Medium Confidence = "medium"
	Low    Confidence = "low"
)

// Verdict is one allocation's category, how sure it is and the rule that
// gave it (the rule names are documented in docs/snapshot.md).
type Verdict struct {
	Category   Category
	Confidence Confidence
	Rule       string
	Phase      Phase
}

// lifetime is what the category rule needs of one allocation: its phase,
// the trace index where its phase's run ends (the next alloc of another
// phase), where it was freed (-1: alive at the end of the trace) and the
// phase at that moment.
type lifetime struct {
	phase     Phase
	runEnd    int
	free      int
	freePhase Phase
	inTrace   bool // false: allocated before the trace, only its stack is known
	// paramSized: a parameter of the same requested size exists (or no
	// parameter is known at all, so the size cannot be checked).
	paramSized bool
}

// categorize is the category rule, first match wins:
//
//	workspace      stack shows cuBLAS setting up its workspace -> other, high
//	params         stack shows Module._apply (.to/.cuda), parameter init or module construction -> parameters, high
//	optim-init     optimizer phase, stack in the optimizer's _init_group -> optimizer state, high
//	optim-kept     optimizer phase, alive after its step ends -> optimizer state, medium
//	optim-temp     optimizer phase, freed within the step -> other, medium
//	grad-kept      backward phase, alive after the backward ends, the size of a parameter -> gradients, medium
//	bwd-kept       backward phase, alive after the backward ends, no parameter that size -> other, low
//	grad-temp      backward phase, freed within the backward -> autograd temporaries, medium
//	act-saved      forward phase, freed during a backward -> activations, high
//	act-alive      forward phase, alive at the end of the trace -> activations, medium
//	fwd-temp       forward phase, freed within the same forward -> other, medium
//	act-late       forward phase, freed later outside a backward -> activations, low
//	input          user code, other phase, right before a forward -> inputs, low
//	before-trace   allocated before the trace, stack says nothing -> other, low
//	other          anything else -> other, low
func categorize(f stackFacts, l lifetime) Verdict {
	v := func(c Category, conf Confidence, rule string) Verdict {
		return Verdict{Category: c, Confidence: conf, Rule: rule, Phase: l.phase}
	}
	keptPast := l.free < 0 || l.free >= l.runEnd
	switch {
	case f.workspace:
		return v(CatOther, High, "workspace")
	case f.parameters:
		return v(CatParameters, High, "params")
	case f.initGroup:
		return v(CatOptimizerState, High, "optim-init")
	case !l.inTrace:
		return v(CatOther, Low, "before-trace")
	case l.phase == PhaseOptimizer && keptPast:
		return v(CatOptimizerState, Medium, "optim-kept")
	case l.phase == PhaseOptimizer:
		return v(CatOther, Medium, "optim-temp")
	case l.phase == PhaseBackward && keptPast && l.paramSized:
		return v(CatGradients, Medium, "grad-kept")
	case l.phase == PhaseBackward && keptPast:
		return v(CatOther, Low, "bwd-kept")
	case l.phase == PhaseBackward:
		return v(CatAutogradTemporaries, Medium, "grad-temp")
	case l.phase == PhaseForward && l.free >= 0 && l.freePhase == PhaseBackward:
		return v(CatActivations, High, "act-saved")
	case l.phase == PhaseForward && l.free < 0:
		return v(CatActivations, Medium, "act-alive")
	case l.phase == PhaseForward && l.free < l.runEnd:
		return v(CatOther, Medium, "fwd-temp")
	case l.phase == PhaseForward:
		return v(CatActivations, Low, "act-late")
	case f.userDirect:
		return v(CatInputs, Low, "input")
	}
	return v(CatOther, Low, "other")
}

// Classifier categorizes the allocations of one device's trace. It holds
// the phase of every entry, where each phase's run ends and where each
// allocation was freed: one pass over the trace, then constant work per
// allocation.
type Classifier struct {
	snap   *Snapshot
	dev    int
	facts  []stackFacts
	known  []bool
	phase  []Phase
	runEnd []int32       // by trace index: the first alloc of the next run of another phase
	freeAt map[int]int32 // alloc index -> free_completed index
	// paramSizes are the requested sizes of allocations the params rule
	// matched: a gradient has its parameter's size.
	paramSizes map[int64]bool
}

// NewClassifier prepares the category rule for device dev.
func NewClassifier(s *Snapshot, dev int) *Classifier {
	c := &Classifier{snap: s, dev: dev, facts: make([]stackFacts, len(s.Stacks)), known: make([]bool, len(s.Stacks))}
	if dev >= len(s.Traces) {
		return c
	}
	trace := s.Traces[dev]
	c.phase = s.phases(dev, c.factsOf)
	c.runEnd = make([]int32, len(trace))
	end, last := int32(len(trace)), -1
	for i := len(trace) - 1; i >= 0; i-- {
		if trace[i].Action == ActionAlloc {
			if last >= 0 && c.phase[i] != c.phase[last] {
				end = int32(last) // the first alloc of the next run
			}
			last = i
		}
		c.runEnd[i] = end
	}
	c.paramSizes = c.parameterSizes()
	c.freeAt = map[int]int32{}
	open := map[uint64]int{}
	for i := range trace {
		switch trace[i].Action {
		case ActionAlloc:
			open[trace[i].Addr] = i
		case ActionFreeCompleted:
			if a, ok := open[trace[i].Addr]; ok {
				c.freeAt[a] = int32(i)
				delete(open, trace[i].Addr)
			}
		}
	}
	return c
}

// parameterSizes collects the requested sizes of parameters: trace
// allocations and blocks whose stacks the params rule matches.
func (c *Classifier) parameterSizes() map[int64]bool {
	out := map[int64]bool{}
	for _, e := range c.snap.Traces[c.dev] {
		if e.Action == ActionAlloc && c.factsOf(e.Stack).parameters {
			out[e.Size] = true
		}
	}
	for i := range c.snap.Segments {
		if c.snap.Segments[i].Device != int64(c.dev) {
			continue
		}
		for _, b := range c.snap.Segments[i].Blocks {
			if b.State != StateInactive && c.factsOf(b.Stack).parameters {
				out[b.Requested] = true
			}
		}
	}
	return out
}

func (c *Classifier) factsOf(id StackID) stackFacts {
	if id == stackBeforeTrace || int(id) >= len(c.facts) {
		return stackFacts{}
	}
	if !c.known[id] {
		c.facts[id], c.known[id] = c.snap.factsOf(c.snap.Stack(id)), true
	}
	return c.facts[id]
}

// Of categorizes the allocation made by trace entry index (-1: before the
// trace) with stack id.
func (c *Classifier) Of(index int, stack StackID) Verdict {
	l := lifetime{free: -1}
	if index >= 0 && index < len(c.phase) {
		l.inTrace, l.phase, l.runEnd = true, c.phase[index], int(c.runEnd[index])
		size := c.snap.Traces[c.dev][index].Size
		l.paramSized = len(c.paramSizes) == 0 || c.paramSizes[size]
		if f, ok := c.freeAt[index]; ok {
			l.free, l.freePhase = int(f), c.phase[f]
		}
	}
	return categorize(c.factsOf(stack), l)
}

// PhaseAt is the phase in effect at trace entry index.
func (c *Classifier) PhaseAt(index int) Phase {
	if index < 0 || index >= len(c.phase) {
		return PhaseOther
	}
	return c.phase[index]
}
