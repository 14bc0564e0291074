package snapshot

import (
	"sort"
	"strconv"

	"github.com/torchmem/torchmem/internal/units"
)

// Bucket is a run of trace entries reduced to what a chart needs: the
// highest and lowest allocated level in it and the highest reserved level.
type Bucket struct {
	First, Last  int   // trace indexes covered
	TimeUS       int64 // time of the entry with the most allocated bytes
	MaxAllocated int64
	MinAllocated int64
	MaxReserved  int64
}

// Marker is a point of interest on the timeline.
type Marker struct {
	Kind   string `json:"kind"` // "oom" or "annotation"
	Index  int    `json:"index,omitempty"`
	TimeUS int64  `json:"time_us,omitempty"`
	Label  string `json:"label"`
}

// Timeline is one device's memory over its trace.
type Timeline struct {
	Device  int      `json:"device"`
	Entries int      `json:"entries"`
	HasTime bool     `json:"has_time"`
	Start   Level    `json:"start"`
	Peak    Level    `json:"peak_allocated"`
	Markers []Marker `json:"markers"`
	levels  []Level
}

// BuildTimeline replays device dev's trace into levels and markers: OOM
// entries and external_annotations (record_function scopes) of the device.
func BuildTimeline(s *Snapshot, dev int) *Timeline {
	t := &Timeline{Device: dev, Entries: len(s.Traces[dev]), Markers: []Marker{}}
	t.levels = make([]Level, 0, len(s.Traces[dev]))
	t.Start = s.Replay(dev, func(l Level, e *TraceEntry) {
		t.levels = append(t.levels, l)
		t.HasTime = t.HasTime || e.HasTime
		if e.Action == ActionOOM {
			t.Markers = append(t.Markers, Marker{Kind: "oom", Index: l.Index, TimeUS: e.TimeUS,
				Label: "OOM: requested " + units.Bytes(e.Size) + " (" + itoa(e.Size) + " bytes), " +
					units.Bytes(e.DeviceFree) + " free on the device"})
		}
	})
	t.Peak = t.Start
	for _, l := range t.levels {
		if l.Allocated > t.Peak.Allocated {
			t.Peak = l
		}
	}
	for _, a := range s.Annotations {
		if a.Device == int64(dev) && t.HasTime {
			t.Markers = append(t.Markers, Marker{Kind: "annotation", Index: t.indexAt(a.TimeUS), TimeUS: a.TimeUS, Label: a.Stage + " " + a.Name})
		}
	}
	sort.SliceStable(t.Markers, func(i, j int) bool { return t.Markers[i].Index < t.Markers[j].Index })
	return t
}

// Levels returns every level, one per trace entry.
func (t *Timeline) Levels() []Level { return t.levels }

// indexAt returns the first trace index at or after time us.
func (t *Timeline) indexAt(us int64) int {
	return sort.Search(len(t.levels), func(i int) bool { return t.levels[i].TimeUS >= us })
}

// Buckets reduces entries [from, to) to at most n buckets of equal entry
// counts, keeping each bucket's extremes so no peak is lost.
func (t *Timeline) Buckets(from, to, n int) []Bucket {
	from, to = max(from, 0), min(to, len(t.levels))
	if to <= from || n <= 0 {
		return nil
	}
	per := (to - from + n - 1) / n
	out := make([]Bucket, 0, (to-from)/per+1)
	for lo := from; lo < to; lo += per {
		hi := min(lo+per, to)
		b := Bucket{First: lo, Last: hi - 1, MinAllocated: t.levels[lo].Allocated, MaxAllocated: -1}
		for _, l := range t.levels[lo:hi] {
			if l.Allocated > b.MaxAllocated {
				b.MaxAllocated, b.TimeUS = l.Allocated, l.TimeUS
			}
			b.MinAllocated = min(b.MinAllocated, l.Allocated)
			b.MaxReserved = max(b.MaxReserved, l.Reserved)
		}
		out = append(out, b)
	}
	return out
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
