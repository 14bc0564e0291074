package snapshot

import "sort"

// SiteDelta is how one site's memory changed between two snapshots.
type SiteDelta struct {
	Site        string `json:"site"`
	Via         string `json:"via,omitempty"`
	BeforeBytes int64  `json:"before_bytes"`
	AfterBytes  int64  `json:"after_bytes"`
	BeforeCount int    `json:"before_count"`
	AfterCount  int    `json:"after_count"`
	DeltaBytes  int64  `json:"delta_bytes"`
}

// Diff is what `torchmem snapshot diff A B` reports.
type Diff struct {
	Before []DeviceSummary `json:"before"`
	After  []DeviceSummary `json:"after"`
	Sites  []SiteDelta     `json:"sites"` // largest growth first
}

// Compare groups the active blocks of a and b by site and returns what
// grew (and shrank).
func Compare(a, b *Snapshot, depth int) *Diff {
	d := &Diff{Before: deviceSummaries(a), After: deviceSummaries(b)}
	idx := map[string]int{}
	var vias []map[string]int64
	add := func(s *Snapshot, after bool) {
		ss := NewSites(s, depth)
		for i := range s.Segments {
			for _, blk := range s.Segments[i].Blocks {
				if blk.State == StateInactive {
					continue
				}
				site := ss.Of(blk.Stack)
				j, ok := idx[site.Key]
				if !ok {
					j = len(d.Sites)
					idx[site.Key] = j
					d.Sites = append(d.Sites, SiteDelta{Site: site.Key})
					vias = append(vias, map[string]int64{})
				}
				if site.Via != "" {
					vias[j][site.Via] += blk.Size
				}
				if after {
					d.Sites[j].AfterBytes += blk.Size
					d.Sites[j].AfterCount++
				} else {
					d.Sites[j].BeforeBytes += blk.Size
					d.Sites[j].BeforeCount++
				}
			}
		}
	}
	add(a, false)
	add(b, true)
	for i := range d.Sites {
		d.Sites[i].DeltaBytes = d.Sites[i].AfterBytes - d.Sites[i].BeforeBytes
		d.Sites[i].Via = heaviest(vias[i]) // the tie rule of group.go
	}
	sort.SliceStable(d.Sites, func(i, j int) bool {
		if d.Sites[i].DeltaBytes != d.Sites[j].DeltaBytes {
			return d.Sites[i].DeltaBytes > d.Sites[j].DeltaBytes
		}
		return d.Sites[i].Site < d.Sites[j].Site
	})
	if d.Sites == nil {
		d.Sites = []SiteDelta{}
	}
	return d
}
