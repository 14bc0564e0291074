package snapshot

import "sort"

// SiteBytes is the memory one row (a site, library frame, module, file or
// category) holds.
type SiteBytes struct {
	Site
	Bytes int64   `json:"bytes"`
	Count int     `json:"count"`
	Share float64 `json:"share"` // of all bytes in the same view
}

// SiteTable is memory grouped into rows at one moment.
type SiteTable struct {
	Device int         `json:"device"`
	Total  int64       `json:"total_bytes"`
	Sites  []SiteBytes `json:"sites"`
}

// Top is what `torchmem snapshot top` reports.
type Top struct {
	Depth   int     `json:"depth"`
	GroupBy GroupBy `json:"group_by"`
	// AtSnapshot holds the blocks not inactive, per device; empty when
	// only a moment of the trace was asked for.
	AtSnapshot []SiteTable `json:"at_snapshot"`
	// AtPeak holds, per device with a trace, the rows alive when allocated
	// memory peaked, or at the moment TopOptions.At names.
	AtPeak []PeakSites `json:"at_peak"`
}

// PeakSites are the rows alive at one moment of a device's trace (its peak
// unless TopOptions.At said otherwise), with what they hold by category
// and phase.
type PeakSites struct {
	Peak Level `json:"peak"`
	// Moment is "peak", or the --at value that chose this level.
	Moment string `json:"moment"`
	SiteTable
	Breakdown Breakdown `json:"breakdown"`
}

// TopOptions choose the grouping and the moment of `top`.
type TopOptions struct {
	Depth   int     // user frames per line row
	GroupBy GroupBy // "" is line
	// At, if set, replaces the snapshot and peak views by this moment
	// of each device's trace.
	At *Moment
}

// TopSites groups the memory of s by line site, at the snapshot and at
// each device's peak (TopGroups with the default options).
func TopSites(s *Snapshot, depth int) *Top {
	return TopGroups(s, TopOptions{Depth: depth})
}

// TopGroups groups the memory of s into rows (opt.GroupBy), at the snapshot
// (blocks not inactive) and at each device's peak of allocated memory, or
// only at opt.At.
func TopGroups(s *Snapshot, opt TopOptions) *Top {
	ss := NewSites(s, opt.Depth)
	by := opt.GroupBy
	if by == "" {
		by = GroupLine
	}
	top := &Top{Depth: ss.depth, GroupBy: by, AtSnapshot: []SiteTable{}, AtPeak: []PeakSites{}}
	if opt.At == nil {
		top.AtSnapshot = atSnapshot(s, ss, by)
	}
	for dev := range s.Traces {
		if len(s.Traces[dev]) == 0 {
			continue
		}
		m := Moment{Kind: MomentPeak}
		if opt.At != nil {
			m = *opt.At
		}
		level := s.LevelAt(dev, m)
		c := NewClassifier(s, dev)
		acc := newGroupAcc(ss, by, dev)
		bd := newBreakdownAcc()
		for _, l := range s.liveAt(dev, level.Index) {
			v := c.Of(l.index, l.stack)
			acc.add(l.stack, v.Category, l.size)
			bd.add(v, l.size)
		}
		top.AtPeak = append(top.AtPeak, PeakSites{Peak: level, Moment: m.String(), SiteTable: acc.done(), Breakdown: bd.done()})
	}
	return top
}

// atSnapshot groups the blocks not inactive of every device; categories
// come from the trace entry that allocated each block, when there is one.
func atSnapshot(s *Snapshot, ss *Sites, by GroupBy) []SiteTable {
	accs := map[int64]*groupAcc{}
	var devs []int64
	for i := range s.Segments {
		seg := &s.Segments[i]
		acc := accs[seg.Device]
		if acc == nil {
			acc = newGroupAcc(ss, by, int(seg.Device))
			accs[seg.Device] = acc
			devs = append(devs, seg.Device)
		}
	}
	sort.Slice(devs, func(i, j int) bool { return devs[i] < devs[j] })
	out := []SiteTable{}
	for _, d := range devs {
		var c *Classifier
		allocIdx := map[uint64]int{}
		if by == GroupCategory {
			c = NewClassifier(s, int(d))
			if int(d) < len(s.Traces) {
				for addr, l := range s.liveAt(int(d), len(s.Traces[d])-1) {
					allocIdx[addr] = l.index
				}
			}
		}
		for i := range s.Segments {
			seg := &s.Segments[i]
			if seg.Device != d {
				continue
			}
			for _, b := range seg.Blocks {
				if b.State == StateInactive {
					continue
				}
				cat := CatOther
				if c != nil {
					idx, ok := allocIdx[b.Address]
					if !ok {
						idx = -1
					}
					cat = c.Of(idx, b.Stack).Category
				}
				accs[d].add(b.Stack, cat, b.Size)
			}
		}
		out = append(out, accs[d].done())
	}
	return out
}
