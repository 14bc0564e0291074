package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/torchmem/torchmem/internal/snapshot"
	"github.com/torchmem/torchmem/internal/termsafe"
	"github.com/torchmem/torchmem/internal/units"
)

func newSnapshotTopCmd(env *Env) *cobra.Command {
	var asJSON bool
	var depth, limit int
	cmd := &cobra.Command{
		Use:   "top FILE",
		Short: "The allocation sites holding memory, at the snapshot and at the trace's peak",
		Long: `Group the memory held by allocation site: the innermost user frame of each
stack (--depth N keeps N user frames), with library frames (torch, site-packages,
the standard library) and C++ frames folded away; VIA names the library frame
that allocated for it. Shown at the moment of the snapshot and, when a trace was
recorded, at the peak of allocated memory.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := snapshotLoad(env, args[0])
			if err != nil {
				return err
			}
			top := snapshot.TopSites(s, depth)
			if asJSON {
				return writeJSON(env.Stdout, top)
			}
			return printSnapshotTop(env.Stdout, top, limit)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print all sites as JSON (sizes in bytes)")
	cmd.Flags().IntVar(&depth, "depth", 1, "user frames that make up a site")
	cmd.Flags().IntVarP(&limit, "limit", "n", 15, "sites to show per table (0: all)")
	return cmd
}

func printSnapshotTop(w io.Writer, top *snapshot.Top, limit int) error {
	for _, t := range top.AtSnapshot {
		fmt.Fprintf(w, "at the snapshot, device %d: %s held by active blocks\n", t.Device, units.Bytes(t.Total))
		printSnapshotSites(w, t.Sites, limit)
	}
	for _, p := range top.AtPeak {
		fmt.Fprintf(w, "\nat the peak of allocated memory, device %d: %s requested at trace entry %d\n",
			p.Device, units.Bytes(p.Peak.Allocated), p.Peak.Index)
		printSnapshotSites(w, p.Sites, limit)
	}
	if len(top.AtPeak) == 0 {
		fmt.Fprintln(w, "\n(no trace recorded: no view at the peak)")
	}
	return nil
}

func printSnapshotSites(w io.Writer, sites []snapshot.SiteBytes, limit int) {
	tw := newTable(w)
	fmt.Fprintln(tw, "  BYTES\tSHARE\tCOUNT\tSITE\tVIA")
	for i, s := range sites {
		if limit > 0 && i == limit {
			fmt.Fprintf(tw, "  …\t\t\t%d more sites\t\n", len(sites)-limit)
			break
		}
		fmt.Fprintf(tw, "  %s\t%.1f%%\t%d\t%s\t%s\n", units.Bytes(s.Bytes), s.Share*100, s.Count,
			termsafe.Line(snapshotShortName(s.Key)), termsafe.Line(snapshotShortName(s.Via)))
	}
	tw.Flush()
}

// snapshotShortName drops the template and argument lists of C++ frames
// ("at::native::reduce_kernel<float, …>(at::TensorIterator&)" becomes
// "at::native::reduce_kernel<…>(…)") so text tables stay readable; Python
// frames (no "::") and --json keep everything. A parenthesis right after
// "::" is part of the name ("(anonymous namespace)") and is kept.
func snapshotShortName(s string) string {
	if !strings.Contains(s, "::") {
		return s
	}
	// Sites of --depth N join frames with " < ": shorten each frame.
	if parts := strings.Split(s, " < "); len(parts) > 1 {
		for i, p := range parts {
			parts[i] = snapshotShortName(p)
		}
		return strings.Join(parts, " < ")
	}
	out := make([]rune, 0, len(s))
	var open, close rune // the brackets being skipped, if depth > 0
	depth := 0
	for _, r := range s {
		if depth > 0 {
			if r == open {
				depth++
			} else if r == close {
				depth--
			}
			continue
		}
		switch {
		case r == '<':
			open, close, depth = '<', '>', 1
			out = append(out, []rune("<…>")...)
			continue
		case r == '(' && !strings.HasSuffix(string(out), "::"):
			open, close, depth = '(', ')', 1
			out = append(out, []rune("(…)")...)
			continue
		}
		out = append(out, r)
	}
	return string(out)
}
