package webassets

import (
	"slices"
	"time"
)

// The fill rule of every chart (report and dashboard): a line is drawn
// only between samples that were measured close together, and a slowly
// read series is held at its last read only as long as that read can
// still be the value.
const (
	// CarryFactor: a slow series' last read is carried forward at most
	// this many of its periods (one late read is normal under load, two
	// missed ones mean the reader stopped).
	CarryFactor = 2
	// GapFactor: two consecutive samples further apart than this many
	// median sampling intervals have a gap between them (the sampler was
	// stopped, suspended or the store lost rows); no line crosses it.
	GapFactor = 3
)

// CarryLimit is how long a read of a series read every period is carried.
func CarryLimit(period time.Duration) time.Duration { return CarryFactor * period }

// Gaps prepares a chart's columns for drawing with uPlot's spanGaps off:
// x in seconds (ascending), one column per series (nil: not measured),
// periods[i] > 0 for a slow series (drawn stepped), breaks the times
// nothing may be carried across (OOM kills, cgroup OOM events). It returns
// new x and columns: a row of nulls in the middle of each sampling gap
// and at each break (so no line crosses either), and each slow column
// carried forward from its last read for at most CarryLimit, never past a
// break or gap row. The inputs are not modified.
func Gaps(x []float64, cols [][]*float64, periods []time.Duration, breaks []float64) ([]float64, [][]*float64) {
	gap := GapFactor * medianStep(x)
	breaks = slices.Sorted(slices.Values(breaks))
	var nx []float64
	var hole []bool // rows inserted as a gap or a break
	rowOf := make([]int, len(x))
	b := 0
	for i, t := range x {
		for b < len(breaks) && breaks[b] <= t {
			if i > 0 && breaks[b] > x[i-1] {
				nx, hole = append(nx, breaks[b]), append(hole, true)
			}
			b++
		}
		if i > 0 && gap > 0 && t-x[i-1] > gap && !hole[len(hole)-1] {
			nx, hole = append(nx, (t+x[i-1])/2), append(hole, true)
		}
		rowOf[i] = len(nx)
		nx, hole = append(nx, t), append(hole, false)
	}
	out := make([][]*float64, len(cols))
	for c, col := range cols {
		nc := make([]*float64, len(nx))
		for i, r := range rowOf {
			nc[r] = col[i]
		}
		if c < len(periods) && periods[c] > 0 {
			carry(nx, nc, hole, CarryLimit(periods[c]).Seconds())
		}
		out[c] = nc
	}
	return nx, out
}

// carry fills col's nulls with the last read while it is at most limit
// seconds old; a hole row stops it.
func carry(x []float64, col []*float64, hole []bool, limit float64) {
	var last *float64
	lastT := 0.0
	for i := range col {
		switch {
		case hole[i]:
			last = nil
		case col[i] != nil:
			last, lastT = col[i], x[i]
		case last != nil && x[i]-lastT <= limit:
			col[i] = last
		}
	}
}

// medianStep is the median interval between consecutive x (0 with fewer
// than two): the sampling interval, robust to a few gaps.
func medianStep(x []float64) float64 {
	if len(x) < 2 {
		return 0
	}
	d := make([]float64, 0, len(x)-1)
	for i := 1; i < len(x); i++ {
		d = append(d, x[i]-x[i-1])
	}
	slices.Sort(d)
	return d[len(d)/2]
}
