package supervisor

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/torchmem/torchmem/internal/store"
	"github.com/torchmem/torchmem/internal/units"
)

// statusLine redraws one line in place on a terminal ("\r" + erase), and
// stays silent when off (stderr is a pipe or a file: logs stay clean).
type statusLine struct {
	w     io.Writer
	on    bool
	shown bool
	last  time.Time
}

func (l *statusLine) draw(text string) {
	if !l.on || time.Since(l.last) < 200*time.Millisecond {
		return
	}
	l.last = time.Now()
	fmt.Fprint(l.w, "\r\x1b[K"+text)
	l.shown = true
}

func (l *statusLine) clear() {
	if l.shown {
		fmt.Fprint(l.w, "\r\x1b[K")
		l.shown = false
	}
}

// statusText: host and GPU memory, headroom to the limit, allocator
// reserved vs allocated, step. Each number says its source.
func (s *sup) statusText() string {
	return "torchmem: " + strings.Join(s.statusParts(), " | ")
}

// Live is what a live view (--tui) shows after each sample.
type Live struct {
	// Parts are the status line's fields ("cgroup 1.2G/2G (800M free)", ...).
	Parts []string
	// Usage and Limit of the job's cgroup, bytes; nil when unknown.
	Usage, Limit *int64
	// Events are the run's last events, oldest first.
	Events []store.Event
}

func (s *sup) live() Live {
	l := Live{Parts: s.statusParts(), Usage: s.last.s.CgroupUsage}
	if s.cg != nil {
		l.Limit = s.cg.Limit()
	}
	l.Events = append(l.Events, s.events[max(0, len(s.events)-10):]...)
	return l
}

func (s *sup) statusParts() []string {
	r := s.last.s
	var parts []string
	if r.CgroupUsage != nil {
		p := "cgroup " + units.Short(*r.CgroupUsage)
		if l := s.cg.Limit(); l != nil {
			p += fmt.Sprintf("/%s (%s free)", units.Short(*l), units.Short(*l-*r.CgroupUsage))
		}
		parts = append(parts, p)
	} else if r.RSSTotal != nil {
		parts = append(parts, "rss "+units.Short(*r.RSSTotal))
	}
	if r.PSSTotal != nil || s.sm.lastPSS != nil {
		v := s.sm.lastPSS
		parts = append(parts, "pss "+units.Short(*v))
	}
	if r.HostAvailable != nil {
		parts = append(parts, "host avail "+units.Short(*r.HostAvailable))
	}
	for i, g := range r.GPUUsed {
		if g != nil {
			parts = append(parts, fmt.Sprintf("gpu%d %s", i, units.Short(*g)))
		}
	}
	if r.AllocReserved != nil {
		parts = append(parts, fmt.Sprintf("alloc %s/%s rsv", units.Short(*r.AllocAllocated), units.Short(*r.AllocReserved)))
	}
	if r.Step != nil {
		parts = append(parts, fmt.Sprintf("step %d", *r.Step))
	}
	return append(parts, time.Since(s.began).Truncate(time.Second).String())
}
