package metrics

import (
	"fmt"
	"sync"
	"time"
)

// Per-process series are opt-in (serve --process-metrics): every
// DataLoader worker restart is a new PID, so a pid label makes new series
// every epoch, and Prometheus keeps each for hours after it ends. The
// job-level and per-role series carry the same totals without a pid.
//
// With them on, two bounds apply: at most MaxProcesses exported at once
// (the biggest by GPU, then RSS), and at most MaxProcessSeries distinct
// (job, pid) pairs created per ProcessSeriesWindow: past that, processes
// not already exported get no series until the window ends (one notice,
// torchmem_process_series_limit_reached 1). The window is a day by
// default: what a Prometheus head block and a dashboard's day view hold.
const (
	DefaultMaxProcessSeries    = 2000
	DefaultProcessSeriesWindow = 24 * time.Hour
)

// seriesBudget counts per-process series created within a window. It is
// shared by every scrape, so it is locked.
type seriesBudget struct {
	max    int
	window time.Duration
	notice func(string)

	mu      sync.Mutex
	start   time.Time           // the window's start
	seen    map[string]struct{} // (job, pid) pairs created in this window
	created uint64              // since the agent started
	capped  bool
	noted   bool
}

func newSeriesBudget(max int, window time.Duration, notice func(string)) *seriesBudget {
	if max <= 0 {
		max = DefaultMaxProcessSeries
	}
	if window <= 0 {
		window = DefaultProcessSeriesWindow
	}
	if notice == nil {
		notice = func(string) {}
	}
	return &seriesBudget{max: max, window: window, notice: notice, seen: map[string]struct{}{}}
}

// admit filters keys (job key + pid) to those that may be exported at
// now: those already created in this window, then new ones while the
// budget lasts. A new window starts counting with the keys still alive.
func (b *seriesBudget) admit(now time.Time, keys []string) []bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.start.IsZero() || now.Sub(b.start) >= b.window || now.Before(b.start) {
		b.newWindow(now, keys)
	}
	ok := make([]bool, len(keys))
	for i, k := range keys {
		if _, done := b.seen[k]; done {
			ok[i] = true
			continue
		}
		if len(b.seen) >= b.max {
			b.capped = true
			continue
		}
		b.seen[k] = struct{}{}
		b.created++
		ok[i] = true
	}
	if b.capped && !b.noted {
		b.noted = true
		b.notice(fmt.Sprintf("per-process metrics: %d series created since %s reached --max-process-series; new processes get none until %s (job and role totals still count them)",
			b.max, b.start.UTC().Format(time.RFC3339), b.start.Add(b.window).UTC().Format(time.RFC3339)))
	}
	return ok
}

// newWindow keeps the keys alive now (their series continue) and forgets
// the rest.
func (b *seriesBudget) newWindow(now time.Time, alive []string) {
	keep := make(map[string]struct{}, len(alive))
	for _, k := range alive {
		if _, ok := b.seen[k]; ok && len(keep) < b.max {
			keep[k] = struct{}{}
		}
	}
	b.start, b.seen, b.capped, b.noted = now, keep, false, false
}

// stats returns the series created since start and whether the budget
// is spent in this window.
func (b *seriesBudget) stats() (created uint64, capped bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.created, b.capped
}
