package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/torchmem/torchmem/internal/snapshot"
	"github.com/torchmem/torchmem/internal/termsafe"
	"github.com/torchmem/torchmem/internal/textwrap"
	"github.com/torchmem/torchmem/internal/units"
)

func newSnapshotSummaryCmd(env *Env) *cobra.Command {
	var asJSON, pytorchOnly bool
	cmd := &cobra.Command{
		Use:   "summary FILE",
		Short: "Per-device memory figures, PyTorch's own segment summary, trace span, OOMs and the peak",
		Long: `Print first exactly what "python -m torch.cuda._memory_viz stats FILE" prints
(the segment map and totals), then per device: reserved, allocated, active and
requested bytes, free memory split into internal (rounding) and external
(fragmentation), segments by pool, allocator settings, and from the trace: its
length and time span, OOM events, and the peak of allocated memory and when.`,
		Args: exactArgs(argSnapshot, "FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := snapshotLoad(env, args[0])
			if err != nil {
				return err
			}
			sum := snapshot.Summarize(s)
			switch {
			case asJSON:
				return writeJSON(env.Stdout, sum)
			case pytorchOnly:
				_, err := io.WriteString(env.Stdout, sum.MemoryVizStats)
				return err
			}
			return printSnapshotSummary(env.Stdout, snapshotTr(env), sum)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the summary as JSON (sizes in bytes, times in microseconds)")
	cmd.Flags().BoolVar(&pytorchOnly, "pytorch", false, "print only what PyTorch's _memory_viz stats prints, byte for byte")
	return cmd
}

func printSnapshotSummary(w io.Writer, t translate, sum *snapshot.Summary) error {
	if _, err := io.WriteString(w, sum.MemoryVizStats); err != nil {
		return err
	}
	fmt.Fprintln(w, t("sum.title", sum.Format))
	for _, d := range sum.Devices {
		printSnapshotDevice(w, t, d)
	}
	for _, tr := range sum.Traces {
		printSnapshotTrace(w, t, tr)
	}
	if len(sum.Traces) == 0 {
		fmt.Fprintln(w, t("sum.no_trace"))
	}
	if len(sum.AllocatorSettings) > 0 {
		settings := termsafe.Line(strings.Join(snapshotSettings(sum.AllocatorSettings), " "))
		fmt.Fprintf(w, "%s\n%s\n", t("sum.settings"), textwrap.Wrap("  ", settings, textwrap.Width))
	}
	fmt.Fprintln(w, t("sum.annotations", sum.Annotations))
	return nil
}

func printSnapshotDevice(w io.Writer, t translate, d snapshot.DeviceSummary) {
	b := units.Bytes
	fmt.Fprintln(w, t("sum.device", d.Device, d.Segments))
	tw := newTable(w)
	row := func(label string, cells ...string) {
		fmt.Fprintf(tw, "  %s\t%s\n", label, strings.Join(cells, "\t"))
	}
	row(t("sum.reserved"), b(d.Reserved))
	row(t("sum.allocated"), b(d.Allocated), t("sum.allocated_more", b(d.Active), b(d.Requested)))
	row(t("sum.free"), b(d.FreeInternal+d.FreeExternal))
	row(t("sum.free_int"), b(d.FreeInternal), t("sum.free_int_why"))
	row(t("sum.free_ext"), b(d.FreeExternal), t("sum.free_ext_why"))
	row(t("sum.largest"), b(d.LargestFreeBlock))
	var pools []string
	for name, p := range d.Pools {
		pools = append(pools, fmt.Sprintf("%s %d (%s)", name, p.Segments, b(p.Bytes)))
	}
	sort.Strings(pools)
	row(t("sum.pools"), t("sum.pools_value", strings.Join(pools, ", "), d.Expandable))
	snapshotRows(tw, t, "  "+t("sum.blocks"), snapshotCounts(d.Blocks))
	tw.Flush()
}

func printSnapshotTrace(w io.Writer, t translate, tr snapshot.TraceSummary) {
	b := units.Bytes
	span := t("sum.no_times")
	at := func(l snapshot.Level) string { return t("sum.entry", l.Index) }
	if tr.HasTime {
		span = t("sum.over", fmt.Sprintf("%.3f", float64(tr.LastUS-tr.FirstUS)/1e6))
		at = func(l snapshot.Level) string {
			return t("sum.at_entry", snapshotSeconds(l.TimeUS-tr.FirstUS), l.Index)
		}
	}
	fmt.Fprintln(w, t("sum.trace", tr.Device, tr.Entries, span))
	tw := newTable(w)
	snapshotRows(tw, t, "  "+t("sum.actions"), snapshotCounts(tr.Actions))
	fmt.Fprintf(tw, "  %s\t%s\n", t("sum.start"), t("sum.start_value", b(tr.Start.Allocated), b(tr.Start.Reserved)))
	fmt.Fprintf(tw, "  %s\t%s\n", t("sum.peak_alloc"), t("sum.peak_alloc_at", b(tr.PeakAlloc.Allocated), at(tr.PeakAlloc), b(tr.PeakAlloc.Reserved)))
	fmt.Fprintf(tw, "  %s\t%s\n", t("sum.peak_rsv"), t("sum.peak_rsv_at", b(tr.PeakReserved.Reserved), at(tr.PeakReserved)))
	if len(tr.OOMs) == 0 {
		fmt.Fprintf(tw, "  %s\t%s\n", t("sum.oom_events"), t("snap.none"))
	}
	for _, o := range tr.OOMs {
		when := t("sum.entry", o.Index)
		if tr.HasTime {
			when = t("sum.at_entry", snapshotSeconds(o.TimeUS-tr.FirstUS), o.Index)
		}
		fmt.Fprintf(tw, "  %s\t%s\n", t("sum.oom"), t("sum.oom_value", when, b(o.Requested), b(o.DeviceFree)))
	}
	tw.Flush()
	fmt.Fprintln(w, t("sum.trace_note"))
}

// snapshotRows writes a table row whose value is a list, continued on
// further rows (empty label) so that no line passes 80 columns (the label
// column is at most 22 wide).
func snapshotRows(tw io.Writer, t translate, label string, items []string) {
	if len(items) == 0 {
		fmt.Fprintf(tw, "%s\t%s\n", label, t("snap.none"))
		return
	}
	line := ""
	for i, it := range items {
		if line != "" && len(line)+2+len(it) > 56 {
			fmt.Fprintf(tw, "%s\t%s,\n", label, line)
			label, line = "", ""
		}
		if line != "" {
			line += ", "
		}
		line += it
		if i == len(items)-1 {
			fmt.Fprintf(tw, "%s\t%s\n", label, line)
		}
	}
}

func snapshotCounts(m map[string]int) []string {
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return parts
}

// snapshotSettings lists allocator settings compactly, one key=value each:
// nested maps show only their non-zero entries.
func snapshotSettings(m map[string]any) []string {
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+snapshotSettingValue(m[k]))
	}
	return parts
}

func snapshotSettingValue(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("%q", x)
	case map[string]any:
		var nz []string
		for k, e := range x {
			if fmt.Sprint(e) != "0" {
				nz = append(nz, k+":"+fmt.Sprint(e))
			}
		}
		sort.Strings(nz)
		return "{" + strings.Join(nz, ",") + "}"
	}
	return fmt.Sprint(v)
}
