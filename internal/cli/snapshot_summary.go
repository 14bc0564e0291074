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
			return printSnapshotSummary(env.Stdout, sum)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the summary as JSON (sizes in bytes, times in microseconds)")
	cmd.Flags().BoolVar(&pytorchOnly, "pytorch", false, "print only what PyTorch's _memory_viz stats prints, byte for byte")
	return cmd
}

func printSnapshotSummary(w io.Writer, sum *snapshot.Summary) error {
	if _, err := io.WriteString(w, sum.MemoryVizStats); err != nil {
		return err
	}
	fmt.Fprintf(w, "torchmem summary (snapshot format %s)\n", sum.Format)
	for _, d := range sum.Devices {
		printSnapshotDevice(w, d)
	}
	for _, t := range sum.Traces {
		printSnapshotTrace(w, t)
	}
	if len(sum.Traces) == 0 {
		fmt.Fprintln(w, "\ntrace: none recorded (enable torch.cuda.memory._record_memory_history before the run)")
	}
	if len(sum.AllocatorSettings) > 0 {
		settings := termsafe.Line(strings.Join(snapshotSettings(sum.AllocatorSettings), " "))
		fmt.Fprintf(w, "\nallocator settings:\n%s\n", textwrap.Wrap("  ", settings, textwrap.Width))
	}
	fmt.Fprintf(w, "external annotations: %d\n", sum.Annotations)
	return nil
}

func printSnapshotDevice(w io.Writer, d snapshot.DeviceSummary) {
	b := units.Bytes
	fmt.Fprintf(w, "\ndevice %d: %d segments\n", d.Device, d.Segments)
	tw := newTable(w)
	fmt.Fprintf(tw, "  reserved\t%s\n", b(d.Reserved))
	fmt.Fprintf(tw, "  allocated\t%s\t(active %s, requested %s)\n", b(d.Allocated), b(d.Active), b(d.Requested))
	free := d.FreeInternal + d.FreeExternal
	fmt.Fprintf(tw, "  free\t%s\n", b(free))
	fmt.Fprintf(tw, "  free, internal\t%s\t(rounding of block sizes)\n", b(d.FreeInternal))
	fmt.Fprintf(tw, "  free, external\t%s\t(fragmentation: inactive blocks)\n", b(d.FreeExternal))
	fmt.Fprintf(tw, "  largest free block\t%s\n", b(d.LargestFreeBlock))
	var pools []string
	for name, p := range d.Pools {
		pools = append(pools, fmt.Sprintf("%s %d (%s)", name, p.Segments, b(p.Bytes)))
	}
	sort.Strings(pools)
	fmt.Fprintf(tw, "  segments by pool\t%s; expandable %d\n", strings.Join(pools, ", "), d.Expandable)
	snapshotRows(tw, "  blocks", snapshotCounts(d.Blocks))
	tw.Flush()
}

func printSnapshotTrace(w io.Writer, t snapshot.TraceSummary) {
	b := units.Bytes
	span := "no times recorded"
	at := func(l snapshot.Level) string { return fmt.Sprintf("entry %d", l.Index) }
	if t.HasTime {
		span = fmt.Sprintf("over %.3f s", float64(t.LastUS-t.FirstUS)/1e6)
		at = func(l snapshot.Level) string {
			return fmt.Sprintf("%s (entry %d)", snapshotSeconds(l.TimeUS-t.FirstUS), l.Index)
		}
	}
	fmt.Fprintf(w, "\ntrace of device %d: %d entries %s\n", t.Device, t.Entries, span)
	tw := newTable(w)
	snapshotRows(tw, "  actions", snapshotCounts(t.Actions))
	fmt.Fprintf(tw, "  at trace start\tallocated %s, reserved %s\n", b(t.Start.Allocated), b(t.Start.Reserved))
	fmt.Fprintf(tw, "  peak allocated\t%s at %s; reserved then %s\n", b(t.PeakAlloc.Allocated), at(t.PeakAlloc), b(t.PeakAlloc.Reserved))
	fmt.Fprintf(tw, "  peak reserved\t%s at %s\n", b(t.PeakReserved.Reserved), at(t.PeakReserved))
	if len(t.OOMs) == 0 {
		fmt.Fprintf(tw, "  OOM events\tnone\n")
	}
	for _, o := range t.OOMs {
		when := fmt.Sprintf("entry %d", o.Index)
		if t.HasTime {
			when = fmt.Sprintf("%s (entry %d)", snapshotSeconds(o.TimeUS-t.FirstUS), o.Index)
		}
		fmt.Fprintf(tw, "  OOM\t%s: %s requested, %s free\n", when, b(o.Requested), b(o.DeviceFree))
	}
	tw.Flush()
	fmt.Fprintln(w, "  (trace sizes are as requested; PyTorch rounds blocks up to 512 bytes)")
}

// snapshotRows writes a table row whose value is a list, continued on
// further rows (empty label) so that no line passes 80 columns (the label
// column is at most 22 wide).
func snapshotRows(tw io.Writer, label string, items []string) {
	if len(items) == 0 {
		fmt.Fprintf(tw, "%s\tnone\n", label)
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
