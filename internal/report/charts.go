package report

import (
	"sort"
	"strconv"
	"time"

	"golang.org/x/text/language"

	"github.com/torchmem/torchmem/internal/store"
	"github.com/torchmem/torchmem/internal/webassets"
)

// chart is one uPlot chart: x in Unix seconds, one column per series, null
// where a series was not measured.
type chart struct {
	Title string `json:"title"`
	Unit  string `json:"unit"` // "bytes", "step", "s"
	// Series are the human labels, Keys the series keys they name
	// (webassets' table: colour, read period), Colors and Step how each
	// is drawn (stepped: a slowly read series, carried between reads).
	Series []string     `json:"series"`
	Keys   []string     `json:"keys"`
	Colors []string     `json:"colors"`
	Step   []bool       `json:"step"`
	X      []float64    `json:"x"`
	Cols   [][]*float64 `json:"cols"`
	// Limit draws a horizontal line (the cgroup limit), bytes.
	Limit *float64 `json:"limit,omitempty"`
	// Note is one line under the chart (why PSS is above cgroup usage).
	Note string `json:"note,omitempty"`
}

func f64(p *int64) *float64 {
	if p == nil {
		return nil
	}
	v := float64(*p)
	return &v
}

// sampleChart builds a chart from the samples with one getter per series
// key; series that are never measured are dropped.
func sampleChart(title string, samples []store.Sample, names []string, get func(s store.Sample, i int) *float64) *chart {
	c := &chart{Title: title, Unit: "bytes"}
	cols := make([][]*float64, len(names))
	for _, s := range samples {
		c.X = append(c.X, float64(s.Time.UnixMilli())/1000)
		for i := range names {
			cols[i] = append(cols[i], get(s, i))
		}
	}
	for i, n := range names {
		if hasValue(cols[i]) {
			c.Keys, c.Cols = append(c.Keys, n), append(c.Cols, cols[i])
		}
	}
	if len(c.Keys) == 0 {
		return nil
	}
	return c
}

func hasValue(col []*float64) bool {
	for _, v := range col {
		if v != nil {
			return true
		}
	}
	return false
}

// charts: host memory (cgroup, PSS, RSS, swap, host available), GPU memory
// per device (NVML, whole device and the job's share), allocator
// (allocated vs reserved), and from the step rows the measured per-step
// peaks and step time; labelled in lang, with the fill rule applied
// (breaks: the times of OOM events, webassets.Gaps).
func charts(d *Data, limit *int64, lang language.Tag, breaks []float64) []*chart {
	t := catalog.T(lang)
	var out []*chart
	host := []string{"cgroup_usage", "pss_total", "rss_total", "swap_total"}
	c := sampleChart(t("chart.host"), d.Samples, host, func(s store.Sample, i int) *float64 {
		return f64([]*int64{s.CgroupUsage, s.PSSTotal, s.RSSTotal, s.SwapTotal}[i])
	})
	if c != nil && limit != nil {
		c.Limit = f64(limit)
	}
	if c != nil && pssAboveCgroup(d.Run.Peaks) {
		c.Note = t("note.pss_above_cgroup")
	}
	out = append(out, c)
	// Host-wide availability has its own scale: on one chart with the job
	// it flattens the job's lines.
	out = append(out, sampleChart(t("chart.available"), d.Samples, []string{"host_available"}, func(s store.Sample, _ int) *float64 {
		return f64(s.HostAvailable)
	}))
	out = append(out, gpuChart(t("chart.gpu"), d.Samples))
	out = append(out, sampleChart(t("chart.allocator"), d.Samples, []string{"alloc_allocated", "alloc_reserved"}, func(s store.Sample, i int) *float64 {
		return f64([]*int64{s.AllocAllocated, s.AllocReserved}[i])
	}))
	out = append(out, stepPeakChart(lang, d.Steps))
	out = append(out, stepChart(lang, d.Steps))
	var kept []*chart
	for _, c := range out {
		if c != nil {
			c.finish(lang, breaks)
			kept = append(kept, c)
		}
	}
	return kept
}

// finish labels and colours the series from webassets' table and applies
// the fill rule to sample charts (step charts are per-step rows: none
// carried, and their ranks are not samples with an interval).
func (c *chart) finish(lang language.Tag, breaks []float64) {
	periods := make([]time.Duration, len(c.Keys))
	samples := len(c.Series) == 0
	for i, k := range c.Keys {
		s, _ := webassets.Lookup(k)
		periods[i] = s.Period
		c.Colors = append(c.Colors, s.Color)
		c.Step = append(c.Step, s.Period > 0)
		if samples {
			c.Series = append(c.Series, webassets.Label(lang, k))
		}
	}
	if samples {
		c.X, c.Cols = webassets.Gaps(c.X, c.Cols, periods, breaks)
	}
}

// pssAboveCgroup: the job's PSS peak exceeds its cgroup usage peak, which
// needs a word (PSS counts shared pages the cgroup may not be charged for).
func pssAboveCgroup(peaks map[string]int64) bool {
	pss, ok1 := peaks["pss_total"]
	cg, ok2 := peaks["cgroup_usage"]
	return ok1 && ok2 && pss > cg
}

func gpuChart(title string, samples []store.Sample) *chart {
	n := 0
	for _, s := range samples {
		n = max(n, len(s.GPUUsed), len(s.GPUJobUsed))
	}
	var names []string
	for i := 0; i < n; i++ {
		names = append(names, webassets.SeriesKey("gpu_used", i), webassets.SeriesKey("gpu_job_used", i))
	}
	return sampleChart(title, samples, names, func(s store.Sample, i int) *float64 {
		list, dev := s.GPUUsed, i/2
		if i%2 == 1 {
			list = s.GPUJobUsed
		}
		if dev < len(list) {
			return f64(list[dev])
		}
		return nil
	})
}

// stepChart plots the mean step time per rank over time.
func stepChart(lang language.Tag, steps []store.Step) *chart {
	return rankChart(lang, catalog.Sprintf(lang, "chart.step_time"), "s", steps, []string{"step_seconds"}, func(st store.Step, _ int) *float64 { return st.StepSeconds })
}

// stepPeakChart plots the measured per-step peaks per rank: the hook reads
// max_memory_allocated/reserved at each optimizer step and resets them, so
// a spike between samples is still there.
func stepPeakChart(lang language.Tag, steps []store.Step) *chart {
	return rankChart(lang, catalog.Sprintf(lang, "chart.step_peaks"), "bytes", steps, []string{"step_peak_allocated", "step_peak_reserved"}, func(st store.Step, i int) *float64 {
		return f64([]*int64{st.StepPeakAllocated, st.StepPeakReserved}[i])
	})
}

// rankChart plots, per rank (or pid) and per series key, the value get
// returns for each step row; rows without any value are skipped. A
// series is labelled "rank 0 · per-step peak allocated".
func rankChart(lang language.Tag, title, unit string, steps []store.Step, keys []string, get func(st store.Step, i int) *float64) *chart {
	// Series are keyed by (rank or pid, key) and named once each: a label
	// through the catalog per step row would cost more than the chart.
	type id struct {
		ranked bool
		n, key int
	}
	series := map[id]map[int]*float64{}
	var xs []float64
	for _, st := range steps {
		who := id{n: st.PID}
		if st.Rank != nil {
			who = id{ranked: true, n: *st.Rank}
		}
		row := false
		for i := range keys {
			v := get(st, i)
			if v == nil {
				continue
			}
			who.key = i
			if series[who] == nil {
				series[who] = map[int]*float64{}
			}
			series[who][len(xs)], row = v, true
		}
		if row {
			xs = append(xs, float64(st.Time.UnixMilli())/1000)
		}
	}
	t := catalog.T(lang)
	nameOf := func(s id) string {
		who := t("rank.pid", strconv.Itoa(s.n))
		if s.ranked {
			who = t("rank.rank", strconv.Itoa(s.n))
		}
		return who + " · " + webassets.Label(lang, keys[s.key])
	}
	if len(xs) == 0 {
		return nil
	}
	c := &chart{Title: title, Unit: unit, X: xs}
	names := make(map[id]string, len(series))
	ids := make([]id, 0, len(series))
	for s := range series {
		ids, names[s] = append(ids, s), nameOf(s)
	}
	sort.Slice(ids, func(i, j int) bool { return names[ids[i]] < names[ids[j]] })
	for _, s := range ids {
		col := make([]*float64, len(xs))
		for i, v := range series[s] {
			col[i] = v
		}
		c.Series, c.Keys, c.Cols = append(c.Series, names[s]), append(c.Keys, keys[s.key]), append(c.Cols, col)
	}
	return c
}
