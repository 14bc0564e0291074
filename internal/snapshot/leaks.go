package snapshot

import (
	"sort"
)

// Leak is a site whose allocations, made during the trace and still alive
// at the snapshot, accumulated step after step.
type Leak struct {
	Site
	Device       int     `json:"device"`
	Count        int     `json:"count"`
	Bytes        int64   `json:"bytes"`
	Steps        int     `json:"steps"`          // distinct steps that left memory behind
	BytesPerStep float64 `json:"bytes_per_step"` // growth per step
	FirstUS      int64   `json:"first_time_us,omitempty"`
	LastUS       int64   `json:"last_time_us,omitempty"`
	Spread       float64 `json:"spread"` // share of the trace the survivors span
}

// Leaks is what `torchmem snapshot leaks` reports.
type Leaks struct {
	// StepSource says how steps were told apart: "annotation NAME" (a
	// record_function scope such as Optimizer.step that repeats), or
	// "repeated sizes" (each step left a block of the same size).
	StepSource string `json:"step_source"`
	Leaks      []Leak `json:"leaks"`
}

// LeakOptions tune leak detection.
type LeakOptions struct {
	Depth     int     // user frames per site
	MinSteps  int     // a site must grow in at least this many steps (default 3)
	MinSpread float64 // and its survivors span this share of the trace (default 0.25)
}

type survivor struct {
	index int
	time  int64
	size  int64
}

// FindLeaks looks for sites whose surviving allocations accumulate.
func FindLeaks(s *Snapshot, opt LeakOptions) *Leaks {
	if opt.MinSteps <= 0 {
		opt.MinSteps = 3
	}
	if opt.MinSpread <= 0 {
		opt.MinSpread = 0.25
	}
	ss := NewSites(s, opt.Depth)
	stepName, stepStarts := s.stepAnnotations(opt.MinSteps)
	out := &Leaks{StepSource: "repeated sizes", Leaks: []Leak{}}
	if stepName != "" {
		out.StepSource = "annotation " + stepName
	}
	for dev := range s.Traces {
		trace := s.Traces[dev]
		if len(trace) == 0 {
			continue
		}
		blockSize := s.blockSizes(dev)
		bySite := map[string][]survivor{}
		siteOf := map[string]*Site{}
		vias := map[string]map[string]int64{}
		for _, l := range s.liveAt(dev, len(trace)-1) {
			if l.index < 0 {
				continue
			}
			site := ss.Of(l.stack)
			size := l.size
			if bs, ok := blockSize[l.addr]; ok {
				size = bs // alive at the snapshot: its block's real size
			}
			bySite[site.Key] = append(bySite[site.Key], survivor{l.index, l.time, size})
			if siteOf[site.Key] == nil {
				siteOf[site.Key], vias[site.Key] = site, map[string]int64{}
			}
			if site.Via != "" {
				vias[site.Key][site.Via] += size
			}
		}
		for key, sv := range bySite {
			site := *siteOf[key]
			site.Via = heaviest(vias[key]) // the tie rule of group.go
			if lk, ok := judge(&site, sv, len(trace), stepStarts, opt); ok {
				lk.Device = dev
				out.Leaks = append(out.Leaks, lk)
			}
		}
	}
	sort.Slice(out.Leaks, func(i, j int) bool {
		if out.Leaks[i].Bytes != out.Leaks[j].Bytes {
			return out.Leaks[i].Bytes > out.Leaks[j].Bytes
		}
		return out.Leaks[i].Key < out.Leaks[j].Key
	})
	return out
}

// judge decides whether one site's survivors look like accumulation.
func judge(site *Site, sv []survivor, traceLen int, stepStarts []int64, opt LeakOptions) (Leak, bool) {
	sort.Slice(sv, func(i, j int) bool { return sv[i].index < sv[j].index })
	lk := Leak{Site: *site, Count: len(sv), FirstUS: sv[0].time, LastUS: sv[len(sv)-1].time}
	for _, x := range sv {
		lk.Bytes += x.size
	}
	lk.Spread = float64(sv[len(sv)-1].index-sv[0].index+1) / float64(traceLen)
	if stepStarts != nil {
		lk.Steps = distinctSteps(sv, stepStarts)
	} else {
		lk.Steps = repeatedSizeSteps(sv, opt.MinSteps)
	}
	if lk.Steps < opt.MinSteps || lk.Spread < opt.MinSpread {
		return lk, false
	}
	lk.BytesPerStep = float64(lk.Bytes) / float64(lk.Steps)
	return lk, true
}

func distinctSteps(sv []survivor, starts []int64) int {
	seen := map[int]bool{}
	for _, x := range sv {
		seen[sort.Search(len(starts), func(i int) bool { return starts[i] > x.time })] = true
	}
	return len(seen)
}

// repeatedSizeSteps guesses the number of steps from survivors without
// step annotations: each step leaves blocks of the same sizes behind, so
// the count most sizes share (among sizes seen at least min times) is
// the step count. Two same-shaped layers leave 2 per step; the count
// shared by most sizes, smaller on ties, sees through that.
func repeatedSizeSteps(sv []survivor, minCount int) int {
	bySize := map[int64]int{}
	for _, x := range sv {
		bySize[x.size]++
	}
	sizesWithCount := map[int]int{}
	for _, n := range bySize {
		if n >= minCount {
			sizesWithCount[n]++
		}
	}
	best, bestSizes := 0, 0
	for n, k := range sizesWithCount {
		if k > bestSizes || (k == bestSizes && n < best) {
			best, bestSizes = n, k
		}
	}
	return best
}

// blockSizes maps the address of every active block on dev to its size.
func (s *Snapshot) blockSizes(dev int) map[uint64]int64 {
	out := map[uint64]int64{}
	for i := range s.Segments {
		if s.Segments[i].Device != int64(dev) {
			continue
		}
		for _, b := range s.Segments[i].Blocks {
			if b.State != StateInactive {
				out[b.Address] = b.Size
			}
		}
	}
	return out
}

// stepAnnotations finds the record_function scope that repeats most (at
// least min times), e.g. "Optimizer.step#AdamW.step", and its start times.
func (s *Snapshot) stepAnnotations(minCount int) (string, []int64) {
	counts := map[string]int{}
	for _, a := range s.Annotations {
		if a.Stage == "START" {
			counts[a.Name]++
		}
	}
	best := ""
	for name, n := range counts {
		if n >= minCount && (best == "" || n > counts[best] || (n == counts[best] && name < best)) {
			best = name
		}
	}
	if best == "" {
		return "", nil
	}
	var starts []int64
	for _, a := range s.Annotations {
		if a.Stage == "START" && a.Name == best {
			starts = append(starts, a.TimeUS)
		}
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	return best, starts
}
