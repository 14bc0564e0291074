package estimate

// The no-grad lever: a forward whose graph no backward used (unused_graph:
// evaluation, sampling or a metric computed under grad mode) run under
// torch.no_grad() instead. Autograd then saves nothing, and what it saved
// goes as soon as the program is done with it: taken to be right after
// the next op's output is made (a layer's output is the next layer's
// input). A tensor the program itself keeps longer (a residual, an output
// appended to a list) is not saved by autograd for that reason, or is
// freed too early here: the what-if is the least the change saves, to be
// confirmed by tracing again with it made.

const (
	noGradLever  = "no-grad"
	noGradChange = "torch.no_grad() around the forward whose graph no backward uses (what autograd saved there freed after the op that uses it next)"
)

// noGradWhatIf is t with each unused-graph storage freed after the next
// allocation its forward makes (nil: t has none).
func noGradWhatIf(t *Trace) (*Trace, []string) {
	f := t.eventFacts()
	e := newTraceEdits()
	for i := range t.Allocs {
		a := &t.Allocs[i]
		if !a.Unused || a.Kind != "fwd" {
			continue
		}
		next := t.nextAlloc(f.madeAt[i])
		if next < 0 || (f.freeAt[i] >= 0 && f.freeAt[i] <= next) {
			continue // gone by then anyway
		}
		if f.freeAt[i] >= 0 {
			e.drop[f.freeAt[i]] = true
		}
		e.after[next] = append(e.after[next], traceEv{free: true, alloc: int32(i)})
	}
	if e.empty() {
		return nil, nil
	}
	return t.edited(e), nil
}

// nextAlloc: the index of the first allocation event after event i (-1:
// none).
func (t *Trace) nextAlloc(i int) int {
	for j := i + 1; j < len(t.events); j++ {
		if !t.events[j].free {
			return j
		}
	}
	return -1
}
