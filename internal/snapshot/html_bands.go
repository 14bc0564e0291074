package snapshot

// pageBands are intervals as the page's band timelines read them, in
// columns. Entry indexes are relative to the window's first entry.
type pageBands struct {
	// Start is the first entry the band is alive at (-1: before the
	// window), each written as the difference from the previous band's.
	Start []int `json:"start"`
	// Len is the number of entries it stays alive: it ends at Start+Len,
	// the window's entry count meaning still alive after the window.
	Len   []int   `json:"len"`
	Size  []int64 `json:"size"`
	Addr  []int64 `json:"addr"`  // address minus the device's base
	Stack []int64 `json:"stack"` // index into the page's stacks, -1 none
	// Verdict indexes the page's verdicts: each allocation's category.
	Verdict []int `json:"verdict,omitempty"`
}

// pageActive is one device's per-allocation view: the bands of its
// allocations and of its segments over a window of its trace.
type pageActive struct {
	Device  int `json:"device"`
	First   int `json:"first"`   // trace index of the window's first entry
	Entries int `json:"entries"` // entries in the window
	Total   int `json:"total"`   // entries in the trace
	// DT is the microseconds from the previous entry to each entry (the
	// first: from the trace's first entry); absent without times.
	DT       []int64   `json:"dt,omitempty"`
	Peak     int       `json:"peak"` // window entry of the peak of allocated memory
	OOMs     []int     `json:"ooms"` // window entries of oom events
	Base     string    `json:"base"` // hex address the bands' addresses count from
	Allocs   pageBands `json:"allocs"`
	Segments pageBands `json:"segments"`
}

// pageActiveOf builds device dev's view. A trace longer than maxEntries is
// shown over the window of that many entries around its peak: the page
// then stays a few bytes per entry however long the trace is.
func (d *pageData) pageActiveOf(s *Snapshot, st *stackTable, dev int, peak Level, maxEntries int) pageActive {
	n := len(s.Traces[dev])
	w0 := 0
	if n > maxEntries {
		w0 = min(max(peak.Index-maxEntries/2, 0), n-maxEntries)
	}
	w1 := min(w0+maxEntries, n)
	pa := pageActive{Device: dev, First: w0, Entries: w1 - w0, Total: n, Peak: max(peak.Index-w0, -1)}
	allocs, segs := s.allocIntervals(dev, w0, w1), s.segmentIntervals(dev)
	base := ^uint64(0)
	for _, l := range [][]interval{allocs, segs} {
		for _, iv := range l {
			base = min(base, iv.addr)
		}
	}
	if base == ^uint64(0) {
		base = 0
	}
	pa.Base = "0x" + uhex(base)
	pa.Allocs = bandsOf(allocs, st, w0, w1, base)
	pa.Allocs.Verdict = d.verdictsOf(NewClassifier(s, dev), allocs, w0, w1)
	pa.Segments = bandsOf(segs, st, w0, w1, base)
	pa.OOMs = []int{}
	for i := w0; i < w1; i++ {
		if s.Traces[dev][i].Action == ActionOOM {
			pa.OOMs = append(pa.OOMs, i-w0)
		}
	}
	if tr := s.Traces[dev]; n > 0 && tr[0].HasTime {
		pa.DT = make([]int64, 0, w1-w0)
		prev := tr[0].TimeUS
		for i := w0; i < w1; i++ {
			pa.DT = append(pa.DT, tr[i].TimeUS-prev)
			prev = tr[i].TimeUS
		}
	}
	return pa
}

// verdictsOf categorizes the allocations bandsOf keeps, interning each
// distinct verdict in d.Verdicts as [category, confidence, rule, phase].
func (d *pageData) verdictsOf(c *Classifier, ivs []interval, w0, w1 int) []int {
	out := make([]int, 0, len(ivs))
	for _, iv := range ivs {
		if iv.end <= w0 || iv.start >= w1 {
			continue
		}
		v := c.Of(iv.start, iv.stack)
		key := [4]string{v.Category.String(), string(v.Confidence), v.Rule, v.Phase.String()}
		i, ok := d.verdictIdx[key]
		if !ok {
			i = len(d.Verdicts)
			d.verdictIdx[key] = i
			d.Verdicts = append(d.Verdicts, key)
		}
		out = append(out, i)
	}
	return out
}

func bandsOf(ivs []interval, st *stackTable, w0, w1 int, base uint64) pageBands {
	b := pageBands{Start: []int{}, Len: []int{}, Size: []int64{}, Addr: []int64{}, Stack: []int64{}}
	prev := 0
	for _, iv := range ivs {
		if iv.end <= w0 || iv.start >= w1 {
			continue
		}
		start, end := max(iv.start, w0-1)-w0, min(iv.end, w1)-w0
		b.Start = append(b.Start, start-prev)
		prev = start
		b.Len = append(b.Len, end-start)
		b.Size = append(b.Size, iv.size)
		b.Addr = append(b.Addr, int64(iv.addr-base))
		b.Stack = append(b.Stack, st.ref(iv.stack))
	}
	return b
}

func uhex(v uint64) string {
	const digits = "0123456789abcdef"
	if v == 0 {
		return "0"
	}
	var buf [16]byte
	i := len(buf)
	for ; v > 0; v >>= 4 {
		i--
		buf[i] = digits[v&15]
	}
	return string(buf[i:])
}
