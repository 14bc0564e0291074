package sample

import (
	"context"
	"errors"
	"io/fs"
	"sync"
	"time"

	"github.com/torchmem/torchmem/internal/procfs"

	"github.com/torchmem/torchmem/internal/jobs"
)

type pssCost struct {
	n    int
	cost time.Duration
}

// pssSlack: callers collect every interval give or take scheduling
// jitter; one Collect landing a hair before a whole read is due must not
// push that read a whole interval.
const pssSlack = 50 * time.Millisecond

// scheduleTogether makes this Collect re-read every process's PSS when,
// with Options.PSSTogether, the whole read is due.
func (s *Sampler) scheduleTogether(now time.Time) {
	if !s.opts.PSSTogether || s.opts.PSSPeriod < 0 {
		return
	}
	switch {
	case s.nextPSS.IsZero():
		// The first Collect reads every (new) process anyway; the first
		// whole read comes PSSFirst later.
		s.nextPSS = now.Add(s.opts.PSSFirst)
	case !now.Add(pssSlack).Before(s.nextPSS):
		s.forcePSS = true
		s.nextPSS = now.Add(s.opts.PSSPeriod)
	}
}

// refreshPSS runs the PSS tier for the job members whose figures are
// missing, or are stale: older than PSSPeriod or RSS moved by more than
// PSSRSSChange since (per process), or a whole read is due (PSSTogether,
// RefreshPSS).
func (s *Sampler) refreshPSS(ctx context.Context, trees []jobs.Tree, now time.Time) pssCost {
	var c pssCost
	if s.opts.PSSPeriod < 0 {
		return c
	}
	start := time.Now()
	var stale []int
	for _, t := range trees {
		for _, m := range t.Members {
			if ps := s.procs[m.PID]; ps != nil && s.pssStale(ps, now) {
				stale = append(stale, m.PID)
			}
		}
	}
	results := s.readPSS(ctx, stale)
	for i, pid := range stale {
		r := results[i]
		if errors.Is(r.err, fs.ErrPermission) {
			s.notice("PSS: smaps_rollup of another user's process is readable only by root or its owner: its PSS/USS are not shown")
		}
		if r.err != nil {
			continue // vanished, or not ours to read: keep the old figure
		}
		ps := s.procs[pid]
		ps.pss, ps.pssAt, ps.rssAtPSS = &r.pss, now, ps.rss()
		if r.oomOK {
			ps.oom = &r.oom
		}
		c.n++
	}
	c.cost = time.Since(start)
	return c
}

type pssResult struct {
	pss   procfs.SmapsRollup
	oom   procfs.OOMScore
	oomOK bool
	err   error
}

// readPSS reads the PSS of pids with up to Options.PSSWorkers reads at
// once: the kernel's page-table walks of different processes run in
// parallel, so a 33-process job's tier takes a fraction of the wall time.
func (s *Sampler) readPSS(ctx context.Context, pids []int) []pssResult {
	out := make([]pssResult, len(pids))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(s.opts.PSSWorkers, len(pids)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = s.readOnePSS(pids[i])
			}
		}()
	}
	for i := range pids {
		if ctx.Err() != nil {
			out[i].err = ctx.Err()
			continue
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

func (s *Sampler) readOnePSS(pid int) pssResult {
	var r pssResult
	if s.opts.PSSFromSmaps {
		r.pss, r.err = s.fs.SmapsSum(pid)
	} else {
		r.pss, r.err = s.fs.SmapsRollup(pid)
	}
	if r.err == nil {
		var err error
		r.oom, err = s.fs.OOMScore(pid)
		r.oomOK = err == nil
	}
	return r
}

func (s *Sampler) pssStale(ps *procState, now time.Time) bool {
	if s.forcePSS || ps.pss == nil {
		return true
	}
	if s.opts.PSSTogether {
		return false // only whole reads (forcePSS) re-read a known process
	}
	if now.Sub(ps.pssAt) >= s.opts.PSSPeriod {
		return true
	}
	old, cur := float64(ps.rssAtPSS), float64(ps.rss())
	if old == 0 {
		return cur != 0
	}
	d := (cur - old) / old
	return d > s.opts.PSSRSSChange || d < -s.opts.PSSRSSChange
}
