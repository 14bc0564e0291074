package estimate

// The grads-to-none lever: optimizer.zero_grad(set_to_none=True) as a
// what-if of a trace whose program zeroes its gradients in place
// (torch < 2.0's default; diffusers' scripts unless --set_grads_to_none).
// Kept, each .grad lives through the next forward, and each backward makes
// the weight's gradient anew, adds it into .grad and frees it. Set to None,
// .grad is freed at zero_grad and the backward's new gradient becomes
// .grad itself (AccumulateGrad takes the tensor it is given): the same
// allocations, with the old gradient freed at the step's end and the new
// one kept instead of freed. No size changes.

const (
	gradsLever  = "grads-to-none"
	gradsChange = "optimizer.zero_grad(set_to_none=True) (the default since torch 2.0; diffusers: --set_grads_to_none)"
)

// gradKey: what tells a weight's gradient from the backward's other
// allocations: its dtype and shape, a 2-D one in either order (a linear
// weight's gradient may be made transposed).
func gradKey(a *TraceAlloc) string {
	s := a.Shape
	if t := transposed(s); t < s {
		s = t
	}
	return a.DType + "|" + s
}

// traceSpan: the events of one phase, first to last.
type traceSpan struct{ first, last int }

// phaseSpans: the spans of each phase named so, in order.
func (t *Trace) phaseSpans(name string) []traceSpan {
	var out []traceSpan
	for i, p := range t.phases {
		if p.phase != name {
			continue
		}
		last := len(t.events) - 1
		if i+1 < len(t.phases) {
			last = t.phases[i+1].at - 1
		}
		out = append(out, traceSpan{p.at, last})
	}
	return out
}

// heldGrad: a gradient under the what-if: its allocation, the event
// that frees the first of its line (-1: none) and, once it is remade,
// where the free of the latest is put before that event.
type heldGrad struct {
	alloc int32
	end   int
	slot  int
}

// gradsToNone is t with its gradients set to None at each step's end
// (the start of its after_step phase); nil when none of them is kept
// through the next backward, which remade it.
func (t *Trace) gradsToNone() *Trace {
	f := t.eventFacts()
	var held []heldGrad
	for i := range t.Allocs {
		if t.Allocs[i].Kind == "grad" {
			held = append(held, heldGrad{int32(i), f.freeAt[i], -1})
		}
	}
	if len(held) == 0 {
		return nil
	}
	e := newTraceEdits()
	bwd := t.phaseSpans("backward")
	b := 0
	for _, z := range t.phaseSpans("after_step") {
		for b < len(bwd) && bwd[b].first < z.first {
			b++
		}
		if b == len(bwd) {
			break
		}
		t.gradsRemade(z.first, bwd[b], held, f, e)
	}
	if e.empty() {
		return nil
	}
	return t.edited(e)
}

// gradsRemade edits, for the zero point z, each gradient held through the
// backward after it that the backward made again: freed at z, and its
// new gradient (a backward allocation of its dtype and shape, freed in
// that backward after it was added in) kept in its place from then on.
func (t *Trace) gradsRemade(z int, span traceSpan, held []heldGrad, f eventFacts, e *traceEdits) {
	waiting := map[string][]int{} // key -> indices into held
	for i, g := range held {
		if f.madeAt[g.alloc] < z && (g.end < 0 || g.end > span.last) {
			k := gradKey(&t.Allocs[g.alloc])
			waiting[k] = append(waiting[k], i)
		}
	}
	if len(waiting) == 0 {
		return
	}
	for i := span.first; i <= span.last; i++ {
		ev := t.events[i]
		a := &t.Allocs[ev.alloc]
		if ev.free || a.Kind != "bwd" || f.freeAt[ev.alloc] < 0 || f.freeAt[ev.alloc] > span.last {
			continue
		}
		k := gradKey(a)
		q := waiting[k]
		if len(q) == 0 {
			continue
		}
		g := &held[q[0]]
		waiting[k] = q[1:]
		e.before[z] = append(e.before[z], traceEv{free: true, alloc: g.alloc})
		e.drop[f.freeAt[ev.alloc]] = true // kept as .grad
		if g.end >= 0 {
			// the first gradient's own free now frees the latest
			free := traceEv{free: true, alloc: ev.alloc}
			if g.slot < 0 {
				e.drop[g.end] = true
				e.before[g.end] = append(e.before[g.end], free)
				g.slot = len(e.before[g.end]) - 1
			} else {
				e.before[g.end][g.slot] = free
			}
		}
		g.alloc = ev.alloc
	}
}
