package snapshot

// Breakdown is the memory alive at one moment by category and by the phase
// each allocation was made in, for `top` and the HTML page.
type Breakdown struct {
	Total int64 `json:"total_bytes"`
	// Categories lists the categories holding memory, in Category order.
	Categories []CategoryBytes `json:"categories"`
	// Phases is bytes by the phase allocations were made in, every phase
	// listed ("forward", "backward", "optimizer", "other").
	Phases map[string]int64 `json:"phases"`
}

// CategoryBytes is what one category holds at a moment.
type CategoryBytes struct {
	Category Category         `json:"category"`
	Bytes    int64            `json:"bytes"`
	Count    int              `json:"count"`
	Share    float64          `json:"share"`
	ByPhase  map[string]int64 `json:"by_phase"`
	// ByConfidence splits Bytes by how sure the rule was; Confidence is
	// the one holding most of them (ties: the lower).
	ByConfidence map[Confidence]int64 `json:"by_confidence"`
	Confidence   Confidence           `json:"confidence"`
	// ByRule splits Bytes by the category rule that matched (names in
	// docs/snapshot.md).
	ByRule map[string]int64 `json:"by_rule"`
}

type breakdownAcc struct {
	total  int64
	rows   [nCategories]CategoryBytes
	phases [nPhases]int64
}

func newBreakdownAcc() *breakdownAcc { return &breakdownAcc{} }

func (a *breakdownAcc) add(v Verdict, size int64) {
	r := &a.rows[v.Category]
	if r.ByPhase == nil {
		r.Category, r.ByPhase, r.ByConfidence, r.ByRule = v.Category, map[string]int64{}, map[Confidence]int64{}, map[string]int64{}
	}
	r.Bytes += size
	r.Count++
	r.ByPhase[v.Phase.String()] += size
	r.ByConfidence[v.Confidence] += size
	r.ByRule[v.Rule] += size
	a.phases[v.Phase] += size
	a.total += size
}

func (a *breakdownAcc) done() Breakdown {
	b := Breakdown{Total: a.total, Categories: []CategoryBytes{}, Phases: map[string]int64{}}
	for p := range nPhases {
		b.Phases[p.String()] = a.phases[p]
	}
	for _, r := range a.rows {
		if r.Count == 0 {
			continue
		}
		if a.total > 0 {
			r.Share = float64(r.Bytes) / float64(a.total)
		}
		r.Confidence = Low
		for _, c := range []Confidence{Medium, High} {
			if r.ByConfidence[c] > r.ByConfidence[r.Confidence] {
				r.Confidence = c
			}
		}
		b.Categories = append(b.Categories, r)
	}
	return b
}

// BreakdownAt returns what device dev holds by category and phase after
// trace entry index (-1: before the first): the data of the page's
// category chart. The peak's is TopGroups(...).AtPeak[i].Breakdown, or
// BreakdownAt(s, dev, s.Peak(dev).Index).
func BreakdownAt(s *Snapshot, dev, index int) Breakdown {
	if dev < 0 || dev >= len(s.Traces) {
		return newBreakdownAcc().done()
	}
	c := NewClassifier(s, dev)
	acc := newBreakdownAcc()
	for _, l := range s.liveAt(dev, index) {
		acc.add(c.Of(l.index, l.stack), l.size)
	}
	return acc.done()
}
