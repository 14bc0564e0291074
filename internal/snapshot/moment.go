package snapshot

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// MomentKind says how a Moment names a point of a trace.
type MomentKind uint8

// Moment kinds: the peak of allocated memory, a trace entry index, or a
// time since the trace's first entry.
const (
	MomentPeak MomentKind = iota
	MomentEntry
	MomentTime
)

// Moment is a point of a device's trace, as `top --at` takes it.
type Moment struct {
	Kind    MomentKind
	Index   int           // MomentEntry
	Elapsed time.Duration // MomentTime: since the first entry
}

// String writes the moment back the way ParseMoment reads it.
func (m Moment) String() string {
	switch m.Kind {
	case MomentEntry:
		return "entry " + strconv.Itoa(m.Index)
	case MomentTime:
		return m.Elapsed.String()
	}
	return "peak"
}

// ParseMoment reads "peak", "entry N" (or "entry:N", "#N") or a duration
// since the first trace entry ("1.5s", "250ms", "+2s").
func ParseMoment(s string) (Moment, error) {
	s = strings.TrimSpace(s)
	if s == "peak" || s == "" {
		return Moment{Kind: MomentPeak}, nil
	}
	for _, p := range []string{"entry ", "entry:", "entry=", "#"} {
		if rest, ok := strings.CutPrefix(s, p); ok {
			n, err := strconv.Atoi(strings.TrimSpace(rest))
			if err != nil || n < 0 {
				return Moment{}, fmt.Errorf("moment %q: want a trace entry index >= 0", s)
			}
			return Moment{Kind: MomentEntry, Index: n}, nil
		}
	}
	d, err := time.ParseDuration(strings.TrimPrefix(s, "+"))
	if err != nil || d < 0 {
		return Moment{}, fmt.Errorf("moment %q: want peak, entry N or a time since the trace's first entry such as 1.5s", s)
	}
	return Moment{Kind: MomentTime, Elapsed: d}, nil
}

// LevelAt returns the level of device dev's trace at m: the peak (Peak's
// rule), the level after entry N (the last entry when N is past the end),
// or after the last entry at or before the time (the start level when the
// time comes before every entry or the trace has no times).
func (s *Snapshot) LevelAt(dev int, m Moment) Level {
	trace := s.Traces[dev]
	target := -1
	switch m.Kind {
	case MomentPeak:
		return s.Peak(dev)
	case MomentEntry:
		target = min(m.Index, len(trace)-1)
	case MomentTime:
		if len(trace) > 0 && trace[0].HasTime {
			t := trace[0].TimeUS + m.Elapsed.Microseconds()
			target = sort.Search(len(trace), func(i int) bool { return trace[i].TimeUS > t }) - 1
		}
	}
	var at Level
	start := s.Replay(dev, func(l Level, _ *TraceEntry) {
		if l.Index == target {
			at = l
		}
	})
	if target < 0 {
		return start
	}
	return at
}
