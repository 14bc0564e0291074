package sample

import (
	"context"
	"time"

	"github.com/torchmem/torchmem/internal/jobs"
)

type pssCost struct {
	n    int
	cost time.Duration
}

// refreshPSS runs the PSS tier for the job members whose figures are
// missing, older than PSSPeriod, or whose RSS moved by more than
// PSSRSSChange since.
func (s *Sampler) refreshPSS(ctx context.Context, trees []jobs.Tree, now time.Time) pssCost {
	var c pssCost
	if s.opts.PSSPeriod < 0 {
		return c
	}
	start := time.Now()
	for _, t := range trees {
		for _, m := range t.Members {
			if ctx.Err() != nil {
				return c
			}
			ps := s.procs[m.PID]
			if ps == nil || !s.pssStale(ps, now) {
				continue
			}
			r, err := s.fs.SmapsRollup(m.PID)
			if err != nil {
				continue // vanished, or not ours to read: keep the old figure
			}
			ps.pss, ps.pssAt, ps.rssAtPSS = &r, now, ps.rss()
			if o, err := s.fs.OOMScore(m.PID); err == nil {
				ps.oom = &o
			}
			c.n++
		}
	}
	c.cost = time.Since(start)
	return c
}

func (s *Sampler) pssStale(ps *procState, now time.Time) bool {
	if s.forcePSS || ps.pss == nil || now.Sub(ps.pssAt) >= s.opts.PSSPeriod {
		return true
	}
	old, cur := float64(ps.rssAtPSS), float64(ps.rss())
	if old == 0 {
		return cur != 0
	}
	d := (cur - old) / old
	return d > s.opts.PSSRSSChange || d < -s.opts.PSSRSSChange
}
