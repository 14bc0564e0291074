package estimate

// traceEdits: how a what-if's events differ from the trace's, by the
// index of a trace's event: events put before it or after it, and the
// event itself dropped (a free the what-if makes elsewhere).
type traceEdits struct {
	before, after map[int][]traceEv
	drop          map[int]bool
}

func newTraceEdits() *traceEdits {
	return &traceEdits{before: map[int][]traceEv{}, after: map[int][]traceEv{}, drop: map[int]bool{}}
}

func (e *traceEdits) empty() bool {
	return len(e.before) == 0 && len(e.after) == 0 && len(e.drop) == 0
}

// edited is t with e's edits: its phase changes and empty_cache() calls
// stay before the events they were before (what is put before an event
// comes after them). It shares t's allocations.
func (t *Trace) edited(e *traceEdits) *Trace {
	c := *t
	n := len(t.events)
	for _, evs := range e.before {
		n += len(evs)
	}
	for _, evs := range e.after {
		n += len(evs)
	}
	c.events = make([]traceEv, 0, n)
	at := make([]int, len(t.events)+1) // a trace's event index -> the new one
	for i, ev := range t.events {
		at[i] = len(c.events)
		c.events = append(c.events, e.before[i]...)
		if !e.drop[i] {
			c.events = append(c.events, ev)
		}
		c.events = append(c.events, e.after[i]...)
	}
	at[len(t.events)] = len(c.events)
	c.phases = append([]tracePhase(nil), t.phases...)
	for i := range c.phases {
		c.phases[i].at = at[c.phases[i].at]
	}
	c.emptied = make([]int, len(t.emptied))
	for i, x := range t.emptied {
		c.emptied[i] = at[x]
	}
	return &c
}
