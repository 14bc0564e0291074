package supervisor

import (
	"testing"
)

func TestGrowthLeak(t *testing.T) {
	const mib = 1 << 20
	line := func(steps []int64, base, per int64) growthTrack {
		var g growthTrack
		for _, s := range steps {
			g.add(s, base+s*per)
		}
		return g
	}
	for _, c := range []struct {
		name string
		g    growthTrack
		want float64 // bytes per step; 0: no leak
	}{
		// examples/train.py --grow-mb 8 under --memory-max 400M: samples at
		// steps 5, 12, 20, 26, 29.
		{"steady 8 MiB/step", line([]int64{5, 12, 20, 26, 29}, 150*mib, 8*mib), 8 * mib},
		{"flat: a peak, not a leak", line([]int64{5, 12, 20, 26, 29}, 300*mib, 0), 0},
		{"steady, then torn down at the end", func() growthTrack {
			g := line([]int64{5, 12, 20, 26, 29, 35, 41}, 150*mib, 8*mib)
			g.add(42, 10*mib) // the last sample, taken while the stopped job freed its memory
			return g
		}(), 8 * mib},
		{"too few samples", line([]int64{5, 20, 29}, 150*mib, 8*mib), 0},
		{"small growth", line([]int64{10, 20, 30, 40}, 150*mib, mib/2), 0},
		{"noisy, no trend", func() growthTrack {
			var g growthTrack
			for i, b := range []int64{300, 100, 350, 90, 320, 110} {
				g.add(int64(10*(i+1)), b*mib)
			}
			return g
		}(), 0},
	} {
		got := c.g.leak()
		switch {
		case c.want == 0 && got != nil:
			t.Errorf("%s: leak %+v, want none", c.name, got)
		case c.want != 0 && (got == nil || got.BytesPerStep < c.want*0.99 || got.BytesPerStep > c.want*1.01):
			t.Errorf("%s: leak %+v, want %.0f bytes/step", c.name, got, c.want)
		}
	}
	track := line([]int64{5, 12, 20, 26, 29}, 150*mib, 8*mib)
	g := track.leak()
	if g == nil || g.FromStep != 5 || g.ToStep != 29 {
		t.Errorf("leak %+v, want steps 5-29", g)
	}
}

// The track stays bounded and ignores repeated or earlier steps.
func TestGrowthTrackBounded(t *testing.T) {
	var g growthTrack
	for s := int64(0); s < 10000; s++ {
		g.add(s, s)
		g.add(s, s) // the same step again: ignored
	}
	if len(g.pts) >= growthMax || g.pts[0].step != 1 {
		t.Errorf("%d points, first step %d", len(g.pts), g.pts[0].step)
	}
}
