package policy

import (
	"math"
	"time"
)

// Time-to-OOM: how long until a resource's usage reaches its limit if it
// keeps growing as it has over the last TrendWindow. The slope is a
// least-squares line through the window's samples (robust to one noisy
// tick, unlike the last two samples' difference); the headroom is the
// latest sample's, which is measured, not fitted.
const (
	// TrendWindow is how far back the fit looks: short enough that a job
	// which starts growing after a flat start (imports, model load) is
	// projected at its new rate within seconds, long enough to hold
	// several ticks at the default 1 s interval.
	TrendWindow = 10 * time.Second
	// TrendMinPoints and TrendMinSpan: fewer samples, or a shorter time
	// between the first and the last, give no projection.
	TrendMinPoints = 5
	TrendMinSpan   = 3 * time.Second
	// TrendMinR2: a fit that explains less of the variance than this is
	// not steady growth (a sawtooth, a plateau with a spike).
	TrendMinR2 = 0.7
	// TrendMinRate (bytes/s): slower growth is not projected (it would
	// say "OOM in 3 days" about noise).
	TrendMinRate = 64 << 10
)

// Point is one usage sample of a resource.
type Point struct {
	At    time.Time
	Bytes float64
}

// Projection is a projected time to OOM.
type Projection struct {
	// Seconds until the usage reaches the limit (0: already there).
	Seconds float64
	// BytesPerSecond is the fitted growth rate.
	BytesPerSecond float64
	// Headroom is the limit minus the latest usage, bytes.
	Headroom float64
	R2       float64
	Points   int
}

// Project returns the time to OOM of a resource with limit bytes from its
// samples pts (oldest first) at now: only the samples within TrendWindow
// before now count. ok is false when they do not show steady growth
// (TrendMinPoints, TrendMinSpan, TrendMinR2, TrendMinRate) or limit <= 0.
func Project(pts []Point, limit float64, now time.Time) (p Projection, ok bool) {
	if limit <= 0 {
		return p, false
	}
	i := len(pts)
	for i > 0 && now.Sub(pts[i-1].At) <= TrendWindow {
		i--
	}
	w := pts[i:]
	if len(w) < TrendMinPoints || w[len(w)-1].At.Sub(w[0].At) < TrendMinSpan {
		return p, false
	}
	slope, r2 := fit(w)
	if slope < TrendMinRate || r2 < TrendMinR2 {
		return p, false
	}
	p = Projection{BytesPerSecond: slope, R2: r2, Points: len(w), Headroom: limit - w[len(w)-1].Bytes}
	p.Seconds = math.Max(0, p.Headroom/slope)
	return p, true
}

// fit is the least-squares slope (bytes per second) of pts and its R².
func fit(pts []Point) (slope, r2 float64) {
	n := float64(len(pts))
	t0 := pts[0].At
	var sx, sy, sxx, sxy, syy float64
	for _, p := range pts {
		x, y := p.At.Sub(t0).Seconds(), p.Bytes
		sx, sy, sxx, sxy, syy = sx+x, sy+y, sxx+x*x, sxy+x*y, syy+y*y
	}
	vx, vy, cxy := sxx-sx*sx/n, syy-sy*sy/n, sxy-sx*sy/n
	if vx <= 0 {
		return 0, 0
	}
	slope = cxy / vx
	if vy <= 0 {
		return slope, 0
	}
	return slope, cxy * cxy / (vx * vy)
}

// Trend keeps the samples of one resource that Project may still use.
type Trend struct {
	pts []Point
}

// Add records usage at time at and drops samples older than TrendWindow.
// A sample earlier than the last (a clock step back) starts over.
func (t *Trend) Add(at time.Time, bytes float64) {
	if n := len(t.pts); n > 0 && at.Before(t.pts[n-1].At) {
		t.pts = t.pts[:0]
	}
	t.pts = append(t.pts, Point{At: at, Bytes: bytes})
	i := 0
	for i < len(t.pts) && at.Sub(t.pts[i].At) > TrendWindow {
		i++
	}
	if i > 0 {
		t.pts = append(t.pts[:0], t.pts[i:]...)
	}
}

// Project is Project over the trend's samples.
func (t *Trend) Project(limit float64, now time.Time) (Projection, bool) {
	return Project(t.pts, limit, now)
}
