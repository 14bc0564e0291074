package report

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/torchmem/torchmem/internal/store"
)

// chart is one uPlot chart: x in Unix seconds, one column per series, null
// where a series was not measured.
type chart struct {
	Title  string       `json:"title"`
	Unit   string       `json:"unit"` // "bytes", "step", "s"
	Series []string     `json:"series"`
	X      []float64    `json:"x"`
	Cols   [][]*float64 `json:"cols"`
	// Limit draws a horizontal line (the cgroup limit), bytes.
	Limit *float64 `json:"limit,omitempty"`
}

func f64(p *int64) *float64 {
	if p == nil {
		return nil
	}
	v := float64(*p)
	return &v
}

// sampleChart builds a chart from the samples with one getter per series;
// series that are never measured are dropped.
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
			c.Series, c.Cols = append(c.Series, n), append(c.Cols, cols[i])
		}
	}
	if len(c.Series) == 0 {
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
// peaks and step time.
func charts(d *Data, limit *int64) []*chart {
	var out []*chart
	host := []string{"cgroup usage (cgroup)", "PSS (smaps_rollup)", "RSS (status)", "swap"}
	c := sampleChart("Job host memory", d.Samples, host, func(s store.Sample, i int) *float64 {
		return f64([]*int64{s.CgroupUsage, s.PSSTotal, s.RSSTotal, s.SwapTotal}[i])
	})
	if c != nil && limit != nil {
		c.Limit = f64(limit)
	}
	out = append(out, c)
	// Host-wide availability has its own scale: on one chart with the job
	// it flattens the job's lines.
	out = append(out, sampleChart("Host memory available (meminfo)", d.Samples, []string{"MemAvailable"}, func(s store.Sample, _ int) *float64 {
		return f64(s.HostAvailable)
	}))
	out = append(out, gpuChart(d.Samples))
	out = append(out, sampleChart("PyTorch allocator (hook)", d.Samples, []string{"allocated", "reserved"}, func(s store.Sample, i int) *float64 {
		return f64([]*int64{s.AllocAllocated, s.AllocReserved}[i])
	}))
	out = append(out, stepPeakChart(d.Steps))
	out = append(out, stepChart(d.Steps))
	var kept []*chart
	for _, c := range out {
		if c != nil {
			kept = append(kept, c)
		}
	}
	return kept
}

func gpuChart(samples []store.Sample) *chart {
	n := 0
	for _, s := range samples {
		n = max(n, len(s.GPUUsed), len(s.GPUJobUsed))
	}
	var names []string
	for i := 0; i < n; i++ {
		names = append(names, "gpu"+strconv.Itoa(i)+" used (NVML)", "gpu"+strconv.Itoa(i)+" job")
	}
	return sampleChart("GPU memory", samples, names, func(s store.Sample, i int) *float64 {
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
func stepChart(steps []store.Step) *chart {
	return rankChart("Step time (hook)", "s", steps, []string{""}, func(st store.Step, _ int) *float64 { return st.StepSeconds })
}

// stepPeakChart plots the measured per-step peaks per rank: the hook reads
// max_memory_allocated/reserved at each optimizer step and resets them, so
// a spike between samples is still there.
func stepPeakChart(steps []store.Step) *chart {
	return rankChart("Per-step peaks (hook, measured)", "bytes", steps, []string{" allocated", " reserved"}, func(st store.Step, i int) *float64 {
		return f64([]*int64{st.StepPeakAllocated, st.StepPeakReserved}[i])
	})
}

// rankChart plots, per rank (or pid) and per suffix, the value get
// returns for each step row; rows without any value are skipped.
func rankChart(title, unit string, steps []store.Step, suffixes []string, get func(st store.Step, i int) *float64) *chart {
	series := map[string]map[int]*float64{}
	var xs []float64
	for _, st := range steps {
		key := fmt.Sprintf("pid %d", st.PID)
		if st.Rank != nil {
			key = fmt.Sprintf("rank %d", *st.Rank)
		}
		row := false
		for i, suf := range suffixes {
			v := get(st, i)
			if v == nil {
				continue
			}
			if series[key+suf] == nil {
				series[key+suf] = map[int]*float64{}
			}
			series[key+suf][len(xs)], row = v, true
		}
		if row {
			xs = append(xs, float64(st.Time.UnixMilli())/1000)
		}
	}
	if len(xs) == 0 {
		return nil
	}
	c := &chart{Title: title, Unit: unit, X: xs}
	keys := make([]string, 0, len(series))
	for k := range series {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		col := make([]*float64, len(xs))
		for i, v := range series[k] {
			col[i] = v
		}
		c.Series, c.Cols = append(c.Series, k), append(c.Cols, col)
	}
	return c
}
