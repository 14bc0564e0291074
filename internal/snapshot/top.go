package snapshot

import "sort"

// SiteBytes is the memory one site holds.
type SiteBytes struct {
	Site
	Bytes int64   `json:"bytes"`
	Count int     `json:"count"`
	Share float64 `json:"share"` // of all bytes in the same view
}

// SiteTable is memory grouped by site at one moment.
type SiteTable struct {
	Device int         `json:"device"`
	Total  int64       `json:"total_bytes"`
	Sites  []SiteBytes `json:"sites"`
}

// Top is what `torchmem snapshot top` reports.
type Top struct {
	Depth      int         `json:"depth"`
	AtSnapshot []SiteTable `json:"at_snapshot"`
	// AtPeak holds, per device with a trace, the sites alive when
	// allocated memory peaked.
	AtPeak []PeakSites `json:"at_peak"`
}

// PeakSites are the sites alive at a device's peak.
type PeakSites struct {
	Peak Level `json:"peak"`
	SiteTable
}

type siteAcc struct {
	ss    *Sites
	idx   map[string]int
	table SiteTable
}

func newSiteAcc(ss *Sites, dev int) *siteAcc {
	return &siteAcc{ss: ss, idx: map[string]int{}, table: SiteTable{Device: dev, Sites: []SiteBytes{}}}
}

func (a *siteAcc) add(stack StackID, size int64) {
	site := a.ss.Of(stack)
	i, ok := a.idx[site.Key]
	if !ok {
		i = len(a.table.Sites)
		a.idx[site.Key] = i
		a.table.Sites = append(a.table.Sites, SiteBytes{Site: *site})
	}
	a.table.Sites[i].Bytes += size
	a.table.Sites[i].Count++
	a.table.Total += size
}

func (a *siteAcc) done() SiteTable {
	t := a.table
	sort.SliceStable(t.Sites, func(i, j int) bool {
		if t.Sites[i].Bytes != t.Sites[j].Bytes {
			return t.Sites[i].Bytes > t.Sites[j].Bytes
		}
		return t.Sites[i].Key < t.Sites[j].Key
	})
	for i := range t.Sites {
		if t.Total > 0 {
			t.Sites[i].Share = float64(t.Sites[i].Bytes) / float64(t.Total)
		}
	}
	return t
}

// TopSites groups the memory of s by allocation site, at the snapshot
// (blocks not inactive) and at each device's peak of allocated memory.
func TopSites(s *Snapshot, depth int) *Top {
	ss := NewSites(s, depth)
	top := &Top{Depth: ss.depth, AtSnapshot: []SiteTable{}, AtPeak: []PeakSites{}}
	accs := map[int64]*siteAcc{}
	var devs []int64
	for i := range s.Segments {
		seg := &s.Segments[i]
		acc := accs[seg.Device]
		if acc == nil {
			acc = newSiteAcc(ss, int(seg.Device))
			accs[seg.Device] = acc
			devs = append(devs, seg.Device)
		}
		for _, b := range seg.Blocks {
			if b.State != StateInactive {
				acc.add(b.Stack, b.Size)
			}
		}
	}
	sort.Slice(devs, func(i, j int) bool { return devs[i] < devs[j] })
	for _, d := range devs {
		top.AtSnapshot = append(top.AtSnapshot, accs[d].done())
	}
	for dev := range s.Traces {
		if len(s.Traces[dev]) == 0 {
			continue
		}
		peak := s.Peak(dev)
		acc := newSiteAcc(ss, dev)
		for _, l := range s.liveAt(dev, peak.Index) {
			acc.add(l.stack, l.size)
		}
		top.AtPeak = append(top.AtPeak, PeakSites{Peak: peak, SiteTable: acc.done()})
	}
	return top
}
