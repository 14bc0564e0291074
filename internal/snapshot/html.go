package snapshot

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"html/template"
	"io"
	"strconv"

	"github.com/torchmem/torchmem/internal/webassets"
)

//go:embed html_page.tmpl
var htmlPage string

// The band viewer: its own files, so they can be read and linted as
// JavaScript and CSS.
var (
	//go:embed html_viewer.js
	bandJS string
	//go:embed html_device.js
	deviceJS string
	viewerJS = bandJS + "\n" + deviceJS
	//go:embed html_viewer.css
	viewerCSS string
)

var pageTmpl = template.Must(template.New("page").Parse(htmlPage))

// HTMLOptions tune the page.
type HTMLOptions struct {
	Title      string
	BasePoints int // buckets of the coarsest timeline level (default 2000)
	// MaxPoints bounds all levels together, per device (default 150000:
	// levels of 2000, 16000 and 128000 buckets). A trace the band view
	// shows whole keeps only 9*BasePoints: the bands have the detail.
	MaxPoints  int
	MaxBlocks  int // blocks drawn in the segment map (default 300000)
	MaxMarkers int // annotation markers per device (default 2000; OOMs always)
	// MaxBandEntries is the trace entries per device shown as one band per
	// allocation (default 250000; a longer trace is shown around its peak).
	MaxBandEntries int
}

// HTMLStats says what went into a page.
type HTMLStats struct {
	Bytes  int64 `json:"bytes"`
	Points int   `json:"timeline_points"`
	Blocks int   `json:"blocks"`
	Stacks int   `json:"stacks"`
	Bands  int   `json:"allocation_bands"`
}

// WriteHTML writes one self-contained page (uPlot and the viewer's script
// inlined, data embedded) for s: per device an active-memory timeline with
// one band per allocation and a band per segment (stacks on hover), what
// is live at the peak, a zoomable allocated/reserved chart, the segment
// map, and the top sites. Intervals, stacks and downsampled levels are
// computed here; the page lays the bands out as it draws.
func WriteHTML(w io.Writer, s *Snapshot, opt HTMLOptions) (HTMLStats, error) {
	opt = opt.withDefaults()
	data := buildPageData(s, opt)
	cw := &countWriter{w: w}
	bw := bufio.NewWriterSize(cw, 1<<20)
	payload, err := json.Marshal(data) // escapes <, > and &: safe inside <script>
	if err != nil {
		return HTMLStats{}, err
	}
	err = pageTmpl.Execute(bw, map[string]any{
		"Title":     opt.Title,
		"UPlotCSS":  template.CSS(webassets.UPlotCSS),
		"UPlotJS":   template.JS(webassets.UPlotJS),
		"Data":      template.JS(payload),
		"ViewerJS":  template.JS(viewerJS),
		"ViewerCSS": template.CSS(viewerCSS),
		"Version":   webassets.UPlotVersion,
		"Truncated": data.BlocksTruncated,
	})
	if err == nil {
		err = bw.Flush()
	}
	st := HTMLStats{Bytes: cw.n, Blocks: data.blockCount, Stacks: len(data.Stacks)}
	for _, a := range data.Active {
		st.Bands += len(a.Allocs.Size)
	}
	for _, t := range data.Timelines {
		for _, l := range t.Levels {
			st.Points += len(l.X)
		}
	}
	return st, err
}

func (o HTMLOptions) withDefaults() HTMLOptions {
	if o.BasePoints <= 0 {
		o.BasePoints = 2000
	}
	if o.MaxPoints <= 0 {
		o.MaxPoints = 150000
	}
	if o.MaxBlocks <= 0 {
		o.MaxBlocks = 300000
	}
	if o.MaxMarkers <= 0 {
		o.MaxMarkers = 2000
	}
	if o.MaxBandEntries <= 0 {
		o.MaxBandEntries = 250000
	}
	return o
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// pageData is the JSON the page's script reads.
type pageData struct {
	Format    string          `json:"format"`
	Devices   []DeviceSummary `json:"devices"`
	Timelines []pageTimeline  `json:"timelines"`
	Segments  []pageSegment   `json:"segments"`
	Active    []pageActive    `json:"active"`
	Stacks    [][]int64       `json:"stacks"` // [site, frame, ...] indexes
	Sites     []string        `json:"sites"`
	Frames    []string        `json:"frames"`
	// Verdicts are the allocations' categories: [category, confidence,
	// rule, phase]; Categories names them in table order.
	Verdicts        [][4]string `json:"verdicts"`
	Categories      []string    `json:"categories"`
	verdictIdx      map[[4]string]int
	Top             []SiteTable `json:"top"`
	TopPeak         []PeakSites `json:"top_peak"`
	Leaks           *Leaks      `json:"leaks"`
	BlocksTruncated bool        `json:"blocks_truncated"`
	blockCount      int
}

type pageLevel struct {
	X    []float64 `json:"x"` // seconds since the first entry, or entry index
	AMax []int64   `json:"amax"`
	AMin []int64   `json:"amin"`
	RMax []int64   `json:"rmax"`
}

type pageTimeline struct {
	Device  int         `json:"device"`
	HasTime bool        `json:"has_time"`
	Entries int         `json:"entries"`
	Peak    Level       `json:"peak"`
	Levels  []pageLevel `json:"levels"` // coarsest first, each 8x finer
	Markers []pageMark  `json:"markers"`
}

type pageMark struct {
	X     float64 `json:"x"`
	Kind  string  `json:"kind"`
	Label string  `json:"label"`
}

type pageSegment struct {
	Device int64  `json:"device"`
	Addr   string `json:"addr"`
	Size   int64  `json:"size"`
	Stream int64  `json:"stream"`
	Pool   string `json:"pool"`
	// Blocks: [offset, size, requested, state (0 active, 1 pending, 2
	// inactive), stack index or -1], flattened.
	Blocks []int64 `json:"blocks"`
}

func buildPageData(s *Snapshot, opt HTMLOptions) *pageData {
	top := TopSites(s, 1)
	d := &pageData{Format: s.Format, Devices: deviceSummaries(s), Timelines: []pageTimeline{},
		Active: []pageActive{}, Segments: []pageSegment{}, Top: top.AtSnapshot, TopPeak: top.AtPeak,
		Leaks: FindLeaks(s, LeakOptions{}), Verdicts: [][4]string{}, verdictIdx: map[[4]string]int{}}
	if d.Devices == nil { // a trace without segments: the page iterates it
		d.Devices = []DeviceSummary{}
	}
	for c := Category(0); c < nCategories; c++ {
		d.Categories = append(d.Categories, c.String())
	}
	st := newStackTable(s)
	for dev := range s.Traces {
		if len(s.Traces[dev]) > 0 {
			tl := BuildTimeline(s, dev)
			d.Timelines = append(d.Timelines, pageTimelineOf(tl, opt))
			d.Active = append(d.Active, d.pageActiveOf(s, st, dev, tl.Peak, opt.MaxBandEntries))
		}
	}
	d.addSegments(s, st, opt)
	d.Stacks, d.Sites, d.Frames = st.Stacks, st.Sites, st.Frames
	return d
}

func pageTimelineOf(tl *Timeline, opt HTMLOptions) pageTimeline {
	maxPoints := opt.MaxPoints
	if tl.Entries <= opt.MaxBandEntries {
		// The band view draws every entry of this trace: the chart keeps
		// its two coarsest levels (finer ones made a 170k-entry page 4 MB
		// larger and 0.4 s slower to load).
		maxPoints = min(maxPoints, 9*opt.BasePoints)
	}
	pt := pageTimeline{Device: tl.Device, HasTime: tl.HasTime, Entries: tl.Entries, Peak: tl.Peak}
	x := func(idx int, us int64) float64 {
		if tl.HasTime {
			return float64(us-tl.Start.TimeUS) / 1e6
		}
		return float64(idx)
	}
	total := 0
	for n := opt.BasePoints; ; n *= 8 {
		bs := tl.Buckets(0, tl.Entries, n)
		if total > 0 && total+len(bs) > maxPoints {
			break
		}
		var l pageLevel
		for _, b := range bs {
			l.X = append(l.X, x(b.First, tl.levels[b.First].TimeUS))
			l.AMax, l.AMin, l.RMax = append(l.AMax, b.MaxAllocated), append(l.AMin, b.MinAllocated), append(l.RMax, b.MaxReserved)
		}
		pt.Levels = append(pt.Levels, l)
		total += len(bs)
		if len(bs) >= tl.Entries {
			break
		}
	}
	ann := 0
	pt.Markers = []pageMark{}
	for _, m := range tl.Markers {
		if m.Kind == "annotation" {
			if ann >= opt.MaxMarkers || m.Label[:min(len(m.Label), 6)] != "START " {
				continue
			}
			ann++
		}
		idx := min(max(m.Index, 0), max(tl.Entries-1, 0))
		us := m.TimeUS
		if !tl.HasTime && tl.Entries > 0 {
			us = tl.levels[idx].TimeUS
		}
		pt.Markers = append(pt.Markers, pageMark{X: x(idx, us), Kind: m.Kind, Label: m.Label})
	}
	return pt
}

func (d *pageData) addSegments(s *Snapshot, st *stackTable, opt HTMLOptions) {
	for i := range s.Segments {
		seg := &s.Segments[i]
		ps := pageSegment{Device: seg.Device, Addr: "0x" + strconv.FormatUint(seg.Address, 16), Size: seg.TotalSize,
			Stream: seg.Stream, Pool: seg.SegmentType, Blocks: make([]int64, 0, 5*len(seg.Blocks))}
		var off int64
		for _, b := range seg.Blocks {
			if d.blockCount >= opt.MaxBlocks {
				d.BlocksTruncated = true
				break
			}
			d.blockCount++
			ps.Blocks = append(ps.Blocks, off, b.Size, b.Requested, int64(pageState(b.State)), st.ref(b.Stack))
			off += b.Size
		}
		d.Segments = append(d.Segments, ps)
	}
}

func pageState(st BlockState) int {
	switch st {
	case StateActiveAllocated:
		return 0
	case StateActivePendingFree:
		return 1
	}
	return 2
}
