package cli

import (
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/torchmem/torchmem/internal/i18n"
	"github.com/torchmem/torchmem/internal/snapshot"
	"github.com/torchmem/torchmem/internal/termsafe"
	"github.com/torchmem/torchmem/internal/units"
)

type snapshotTimelineFlags struct {
	json, csv     bool
	width, points int
	device        int
}

func newSnapshotTimelineCmd(env *Env) *cobra.Command {
	var f snapshotTimelineFlags
	cmd := &cobra.Command{
		Use:   "timeline FILE",
		Short: "Allocated and reserved memory over time, replayed from the trace, OOMs and annotations marked",
		Long: `Replay the allocation trace into allocated and reserved memory over time. Text
output draws a sparkline per device (each column is the maximum of its stretch of
entries, so no peak is lost) with OOMs (!) and record_function scopes (^) marked
below. --csv writes one row per trace entry and one per annotation; --json writes
--points buckets per device with their extremes.`,
		Args: exactArgs(argSnapshot, "FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := snapshotLoad(env, args[0])
			if err != nil {
				return err
			}
			return runSnapshotTimeline(env.Stdout, snapshotTr(env), s, &f)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.json, "json", false, "print bucketed levels and markers as JSON (sizes in bytes)")
	fl.BoolVar(&f.csv, "csv", false, "print every trace entry as CSV: device,index,time_us,action,size,allocated_bytes,reserved_bytes,annotation")
	fl.IntVar(&f.width, "width", 0, "sparkline width in characters (default: fit the terminal: $COLUMNS, the tty, else 80 columns)")
	fl.IntVar(&f.points, "points", 1000, "buckets per device in --json")
	fl.IntVar(&f.device, "device", -1, "only this device (default: every device with a trace)")
	return cmd
}

func runSnapshotTimeline(w io.Writer, t translate, s *snapshot.Snapshot, f *snapshotTimelineFlags) error {
	var tls []*snapshot.Timeline
	for dev := range s.Traces {
		if (f.device < 0 || f.device == dev) && len(s.Traces[dev]) > 0 {
			tls = append(tls, snapshot.BuildTimeline(s, dev))
		}
	}
	switch {
	case f.json:
		return writeJSON(w, snapshotTimelineJSON(tls, f.points))
	case f.csv:
		return writeSnapshotTimelineCSV(w, s, tls)
	}
	if len(tls) == 0 {
		fmt.Fprintln(w, t("snap.no_trace"))
	}
	width := f.width
	if width <= 0 {
		width = snapshotSparklineWidth(runsWidth(w))
	}
	for _, tl := range tls {
		printSnapshotSparkline(w, t, tl, max(width, 8))
	}
	return nil
}

type snapshotTimelineOut struct {
	*snapshot.Timeline
	Buckets []snapshotBucketOut `json:"buckets"`
}

type snapshotBucketOut struct {
	First        int   `json:"first_index"`
	Last         int   `json:"last_index"`
	TimeUS       int64 `json:"time_us,omitempty"`
	MaxAllocated int64 `json:"max_allocated_bytes"`
	MinAllocated int64 `json:"min_allocated_bytes"`
	MaxReserved  int64 `json:"max_reserved_bytes"`
}

func snapshotTimelineJSON(tls []*snapshot.Timeline, points int) map[string]any {
	out := []snapshotTimelineOut{}
	for _, tl := range tls {
		o := snapshotTimelineOut{Timeline: tl, Buckets: []snapshotBucketOut{}}
		for _, b := range tl.Buckets(0, tl.Entries, max(points, 1)) {
			o.Buckets = append(o.Buckets, snapshotBucketOut(b))
		}
		out = append(out, o)
	}
	return map[string]any{"devices": out}
}

func writeSnapshotTimelineCSV(w io.Writer, s *snapshot.Snapshot, tls []*snapshot.Timeline) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"device", "index", "time_us", "action", "size", "allocated_bytes", "reserved_bytes", "annotation"})
	i64 := func(n int64) string { return strconv.FormatInt(n, 10) }
	for _, tl := range tls {
		dev := strconv.Itoa(tl.Device)
		ann := tl.Markers
		for i, l := range tl.Levels() {
			for len(ann) > 0 && ann[0].Index <= i {
				if ann[0].Kind == "annotation" {
					_ = cw.Write([]string{dev, "", i64(ann[0].TimeUS), "annotation", "", "", "", ann[0].Label})
				}
				ann = ann[1:]
			}
			e := &s.Traces[tl.Device][i]
			when := ""
			if e.HasTime {
				when = i64(e.TimeUS)
			}
			_ = cw.Write([]string{dev, strconv.Itoa(i), when, e.Action.String(), i64(e.Size),
				i64(l.Allocated), i64(l.Reserved), ""})
		}
	}
	cw.Flush()
	return cw.Error()
}

// snapshotSparklineWidth is the sparkline width that fits a terminal of
// cols columns: the line's label ("  allocated ") takes 12.
func snapshotSparklineWidth(cols int) int { return max(cols-12, 8) }

var snapshotBars = []rune("▁▂▃▄▅▆▇█")

func printSnapshotSparkline(w io.Writer, t translate, tl *snapshot.Timeline, width int) {
	bs := tl.Buckets(0, tl.Entries, width)
	var maxA, maxR int64
	for _, b := range bs {
		maxA, maxR = max(maxA, b.MaxAllocated), max(maxR, b.MaxReserved)
	}
	scale := max(maxA, maxR, 1)
	line := func(get func(snapshot.Bucket) int64) string {
		var sb strings.Builder
		for _, b := range bs {
			v := get(b)
			sb.WriteRune(snapshotBars[min(int(float64(v)/float64(scale)*float64(len(snapshotBars)-1)+0.5), len(snapshotBars)-1)])
		}
		return sb.String()
	}
	span := t("tl.no_times")
	if tl.HasTime && len(tl.Levels()) > 0 {
		span = fmt.Sprintf("%.3f s", float64(tl.Levels()[len(tl.Levels())-1].TimeUS-tl.Start.TimeUS)/1e6)
	}
	// The labels take 10 columns in every language: the bars line up.
	label := func(id string) string { return i18n.PadRight(t(id), 9) }
	fmt.Fprintln(w, t("tl.header", tl.Device, tl.Entries, span, units.Bytes(scale)))
	fmt.Fprintf(w, "  %s %s\n", label("tl.allocated"), line(func(b snapshot.Bucket) int64 { return b.MaxAllocated }))
	fmt.Fprintf(w, "  %s %s\n", label("tl.reserved"), line(func(b snapshot.Bucket) int64 { return b.MaxReserved }))
	marks, legend := snapshotMarkerLine(tl, bs)
	fmt.Fprintf(w, "  %s %s\n", label("tl.markers"), marks)
	// Peaks and the legend go on their own lines so that the default width
	// keeps every line within 80 columns.
	fmt.Fprintln(w, t("tl.peaks", units.Bytes(tl.Peak.Allocated), tl.Peak.Index, units.Bytes(maxR)))
	if legend != "" {
		fmt.Fprintln(w, t("tl.legend", termsafe.Line(legend)))
	}
	for _, m := range tl.Markers {
		if m.Kind == "oom" {
			fmt.Fprintln(w, t("tl.oom_marker", m.Index, termsafe.Line(m.Label)))
		}
	}
}

// snapshotMarkerLine puts ! under buckets with an OOM and ^ under those
// where an annotated scope starts; it returns the line and the sorted names of
// the scopes marked.
func snapshotMarkerLine(tl *snapshot.Timeline, bs []snapshot.Bucket) (string, string) {
	line := []rune(strings.Repeat(" ", len(bs)))
	names := map[string]bool{}
	for _, m := range tl.Markers {
		for i, b := range bs {
			if m.Index < b.First || m.Index > b.Last {
				continue
			}
			if m.Kind == "oom" {
				line[i] = '!'
			} else if strings.HasPrefix(m.Label, "START ") && line[i] != '!' {
				line[i] = '^'
				names[strings.TrimPrefix(m.Label, "START ")] = true
			}
		}
	}
	// map order is random: the output must not be
	return strings.TrimRight(string(line), " "), strings.Join(slices.Sorted(maps.Keys(names)), ", ")
}
