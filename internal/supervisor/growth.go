package supervisor

import (
	"github.com/torchmem/torchmem/internal/oomexplain"
)

// Growth is a steady climb of the job's host memory with its optimizer
// steps: the signature of a leak (tensors or Python objects kept across
// steps), for which a larger limit only delays the OOM kill.
// Growth is a steady climb of the job's memory with its steps;
// internal/oomexplain owns it (and the advice it calls for).
type Growth = oomexplain.Growth

// growthTrack keeps the job's host memory (cgroup usage, else RSS) at the
// optimizer step of each sample: one point per step, thinned to every
// other point when it holds growthMax, so a day-long run stays small.
type growthTrack struct {
	pts []growthPoint
	// workers is each process's private memory over its life, for
	// DataLoader workers that copy the dataset on read (copyonread.go).
	workers workerTrack
}

type growthPoint struct{ step, bytes int64 }

const growthMax = 512

func (g *growthTrack) add(step, bytes int64) {
	if n := len(g.pts); step < 1 || n > 0 && g.pts[n-1].step >= step {
		return
	}
	g.pts = append(g.pts, growthPoint{step, bytes})
	if len(g.pts) >= growthMax {
		kept := g.pts[:0]
		for i := 0; i < len(g.pts); i += 2 {
			kept = append(kept, g.pts[i])
		}
		g.pts = kept
	}
}

// leak fits usage = a + b·step by least squares and reports the climb when
// it is steady (R² ≥ 0.9 over at least 4 samples and 10 steps), at least
// 1 MiB per step and 64 MiB in all; else nil.
func (g *growthTrack) leak() *Growth {
	pts := trimCollapse(g.pts)
	n := len(pts)
	if n < 4 || pts[n-1].step-pts[0].step < 10 {
		return nil
	}
	var sx, sy, sxx, sxy, syy float64
	for _, p := range pts {
		x, y := float64(p.step), float64(p.bytes)
		sx, sy, sxx, sxy, syy = sx+x, sy+y, sxx+x*x, sxy+x*y, syy+y*y
	}
	fn := float64(n)
	vx, vy, cov := sxx-sx*sx/fn, syy-sy*sy/fn, sxy-sx*sy/fn
	if vx <= 0 || vy <= 0 {
		return nil
	}
	slope, r2 := cov/vx, cov*cov/(vx*vy)
	span := float64(pts[n-1].step - pts[0].step)
	if r2 < 0.9 || slope < 1<<20 || slope*span < 64<<20 {
		return nil
	}
	return &Growth{BytesPerStep: slope, FromStep: pts[0].step, ToStep: pts[n-1].step, R2: r2}
}

// collapseFraction: a last point below this share of the highest one is
// the job being torn down (a kill, the stop's SIGTERM, exit freeing
// everything), not its own behaviour.
const collapseFraction = 0.5

// trimCollapse drops the trailing points of a teardown: one sample taken
// while the job's memory was being freed at the end would otherwise sink
// the fit's R² and hide the leak that ended the run (seen once in ten
// demo runs: a stopped leak reported without its leak verdict).
func trimCollapse(pts []growthPoint) []growthPoint {
	var top int64
	for _, p := range pts {
		top = max(top, p.bytes)
	}
	for len(pts) > 0 && float64(pts[len(pts)-1].bytes) < collapseFraction*float64(top) {
		pts = pts[:len(pts)-1]
	}
	return pts
}

// trackGrowth records a sample's host memory at its optimizer step, and
// its processes' private memory when the sample read it.
func (s *sup) trackGrowth(r reading) {
	b := r.s.CgroupUsage
	if b == nil {
		b = r.s.RSSTotal
	}
	if r.s.Step != nil && b != nil {
		s.growth.add(*r.s.Step, *b)
	}
	s.trackWorkers(r)
}
