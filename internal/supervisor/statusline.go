package supervisor

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/torchmem/torchmem/internal/i18n"
	"github.com/torchmem/torchmem/internal/sample"
	"github.com/torchmem/torchmem/internal/store"
	"github.com/torchmem/torchmem/internal/units"
)

// statusLine keeps one live line on a terminal and stays silent when off
// (stderr is a pipe or a file: logs stay clean). The job writes to the
// same terminal, so, as apt does, the line lives on the bottom row below a
// scroll region of the rows above it: the job's output (and torchmem's
// notices) scroll in the region and never run into the status text. On a
// terminal of unknown or tiny size it falls back to redrawing the current
// line ("\r" + erase).
type statusLine struct {
	w     io.Writer
	on    bool
	shown bool
	last  time.Time
	// now is the clock of the redraw rate (nil: time.Now).
	now func() time.Time
	// size reports the terminal's rows and columns; nil: ask w's tty.
	size func() (rows, cols int, ok bool)
	// rows > 0: the scroll region is set and the status is on this row.
	rows int
}

// statusEvery is the status line's fastest redraw: a burst of samples
// (cgroup events, OOMs) does not flood the terminal.
const statusEvery = 200 * time.Millisecond

func (l *statusLine) draw(text string) {
	if !l.on {
		return
	}
	now := time.Now()
	if l.now != nil {
		now = l.now()
	}
	if now.Sub(l.last) < statusEvery {
		return
	}
	l.last = now
	rows, cols, ok := l.termSize()
	if !ok || rows < 3 {
		l.done()
		fmt.Fprint(l.w, "\r\x1b[K"+fitColumns(text, cols-1))
		l.shown = true
		return
	}
	switch {
	case l.rows == 0: // make room for the row, keep the cursor in the region
		fmt.Fprintf(l.w, "\n\x1b7\x1b[1;%dr\x1b8\x1b[1A", rows-1)
	case rows != l.rows: // resized
		fmt.Fprintf(l.w, "\x1b7\x1b[1;%dr\x1b8", rows-1)
	}
	l.rows = rows
	fmt.Fprintf(l.w, "\x1b7\x1b[%d;1H\x1b[2K%s\x1b8", rows, fitColumns(text, cols-1))
	l.shown = true
}

// clear makes room for a line of torchmem's own: only needed when the
// status shares the job's current line.
func (l *statusLine) clear() {
	if l.shown && l.rows == 0 {
		fmt.Fprint(l.w, "\r\x1b[K")
		l.shown = false
	}
}

// done removes the status for good: the scroll region is reset to the
// whole screen and the status row erased, the cursor left where it was.
func (l *statusLine) done() {
	if l.rows > 0 {
		fmt.Fprintf(l.w, "\x1b7\x1b[r\x1b[%d;1H\x1b[2K\x1b8", l.rows)
		l.rows, l.shown = 0, false
	}
	l.clear()
}

func (l *statusLine) termSize() (rows, cols int, ok bool) {
	if l.size != nil {
		return l.size()
	}
	f, isFile := l.w.(*os.File)
	if !isFile {
		return 0, 0, false
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Row == 0 || ws.Col == 0 {
		return 0, 0, false
	}
	return int(ws.Row), int(ws.Col), true
}

// fitColumns cuts s to n display columns (n <= 0: as is; a CJK character
// takes two, and is never split) so the line never wraps, which would
// break the in-place redraw.
func fitColumns(s string, n int) string {
	if n <= 0 || i18n.Width(s) <= n {
		return s
	}
	w := 0
	for i, r := range s {
		if w += i18n.Width(string(r)); w > n {
			return s[:i]
		}
	}
	return s
}

// statusText: host and GPU memory, headroom to the limit, allocator
// reserved vs allocated, step. Each number says its source.
func (s *sup) statusText() string {
	t := tr(s.lang())
	return t("status.prefix") + strings.Join(s.statusParts(), t("status.sep"))
}

// Live is what a live view (--tui) shows after each sample.
type Live struct {
	// Parts are the status line's fields ("cgroup 1.2G/2G (800M free)", ...).
	Parts []string
	// Usage and Limit of the job's cgroup, bytes; nil when unknown.
	Usage, Limit *int64
	// Events are the run's last events, oldest first.
	Events []store.Event
	// Jobs are the job's processes with their figures as this tick's
	// sample read them (run --tui's process table): a copy (liveJobs),
	// not a second read of the job.
	Jobs []sample.Job
	// HostTotal is the host's MemTotal in bytes, 0 when unknown: what a
	// process's memory bar is drawn against when the cgroup has no limit.
	HostTotal int64
}

// liveEvents is how many of the run's last events Live carries.
const liveEvents = 10

func (s *sup) live() Live {
	l := Live{Parts: s.statusParts(), Usage: s.last.s.CgroupUsage, Limit: s.last.limit}
	l.Events = append(l.Events, s.events[max(0, len(s.events)-liveEvents):]...)
	l.Jobs, l.HostTotal = liveJobs(s.last.jobs), s.last.hostTotal
	return l
}

func (s *sup) statusParts() []string {
	r := s.last.s
	t := tr(s.lang())
	var parts []string
	if r.CgroupUsage != nil {
		p := t("status.cgroup", units.Short(*r.CgroupUsage))
		if l := s.last.limit; l != nil {
			p = t("status.cgroup_limit", units.Short(*r.CgroupUsage), units.Short(*l), units.Short(*l-*r.CgroupUsage))
		}
		parts = append(parts, p)
	} else if r.RSSTotal != nil {
		parts = append(parts, t("status.rss", units.Short(*r.RSSTotal)))
	}
	if v := s.sm.lastPSS; v != nil { // set with every PSSTotal, kept between full reads
		parts = append(parts, t("status.pss", units.Short(*v)))
	}
	if r.HostAvailable != nil {
		parts = append(parts, t("status.host", units.Short(*r.HostAvailable)))
	}
	for i, g := range r.GPUUsed {
		if g != nil {
			parts = append(parts, t("status.gpu", i, units.Short(*g)))
		}
	}
	if r.AllocReserved != nil {
		parts = append(parts, t("status.alloc", units.Short(*r.AllocAllocated), units.Short(*r.AllocReserved)))
	}
	if r.Step != nil {
		parts = append(parts, t("status.step", *r.Step))
	}
	if p := s.projectionText(); p != "" {
		parts = append(parts, p)
	}
	return append(parts, s.now().Sub(s.began).Truncate(time.Second).String())
}
