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
	var groupBy, at string
	cmd := &cobra.Command{
		Use:   "top FILE",
		Short: "What holds memory, by call site, library frame, module, file or category, at the snapshot and at the peak",
		Long: `Group the memory held into rows. --group-by line (default) is the innermost
user frame of each stack (--depth N keeps N user frames) with library and C++
frames folded away; library is the innermost frame in an installed library that
is not plumbing (transformers/activations.py:66 forward, torch/nn/functional.py
cross_entropy); module the chain of nn.Module forwards; file the innermost Python
frame's file; category what the memory holds (parameters, gradients, optimizer
state, activations, autograd temporaries, inputs, other). Rows with equal bytes
are ordered by key; VIA is the library frame (for line rows) or the user line
(for the others) holding most of the row's bytes. Shown at the snapshot and, when
a trace was recorded, at the peak of allocated memory with a breakdown by
category and phase; --at peak|'entry N'|TIME (1.5s since the first entry) shows
one moment of the trace instead.`,
		Args: exactArgs(argSnapshot, "FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opt := snapshot.TopOptions{Depth: depth}
			var err error
			if opt.GroupBy, err = snapshot.ParseGroupBy(groupBy); err != nil {
				return err
			}
			if at != "" {
				m, err := snapshot.ParseMoment(at)
				if err != nil {
					return err
				}
				opt.At = &m
			}
			s, err := snapshotLoad(env, args[0])
			if err != nil {
				return err
			}
			top := snapshot.TopGroups(s, opt)
			if asJSON {
				return writeJSON(env.Stdout, top)
			}
			return printSnapshotTop(env.Stdout, snapshotTr(env), top, limit)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print all rows as JSON (sizes in bytes)")
	cmd.Flags().IntVar(&depth, "depth", 1, "user frames that make up a line row")
	cmd.Flags().IntVarP(&limit, "limit", "n", 15, "rows to show per table (0: all)")
	cmd.Flags().StringVar(&groupBy, "group-by", "line", "rows by line, library, module, file or category")
	cmd.Flags().StringVar(&at, "at", "", "only this moment of the trace: peak, 'entry N' or a time since the first entry (1.5s)")
	return cmd
}

func printSnapshotTop(w io.Writer, t translate, top *snapshot.Top, limit int) error {
	for _, at := range top.AtSnapshot {
		fmt.Fprintln(w, t("top.at_snapshot", at.Device, units.Bytes(at.Total)))
		printSnapshotSites(w, t, top.GroupBy, at.Sites, limit)
	}
	for i, p := range top.AtPeak {
		if i > 0 || len(top.AtSnapshot) > 0 {
			fmt.Fprintln(w)
		}
		what := t("top.at_peak")
		if p.Moment != "peak" {
			what = t("top.at_moment", p.Moment)
		}
		fmt.Fprintln(w, t("top.moment_line", what, p.Device, units.Bytes(p.Peak.Allocated), p.Peak.Index))
		printSnapshotSites(w, t, top.GroupBy, p.Sites, limit)
		printSnapshotBreakdown(w, t, p.Breakdown)
	}
	if len(top.AtPeak) == 0 {
		fmt.Fprintln(w, t("top.no_trace"))
	}
	return nil
}

func printSnapshotSites(w io.Writer, t translate, by snapshot.GroupBy, sites []snapshot.SiteBytes, limit int) {
	tw := newTable(w)
	head, via := t(map[snapshot.GroupBy]string{snapshot.GroupLine: "top.col.site", snapshot.GroupLibrary: "top.col.library",
		snapshot.GroupModule: "top.col.module", snapshot.GroupFile: "top.col.file", snapshot.GroupCategory: "top.col.category"}[by]), t("top.col.user_line")
	if by == snapshot.GroupLine {
		via = t("top.col.via")
	}
	fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", t("top.col.bytes"), t("top.col.share"), t("top.col.count"), head, via)
	for i, s := range sites {
		if limit > 0 && i == limit {
			fmt.Fprintf(tw, "  …\t\t\t%s\t\n", t("top.more_rows", len(sites)-limit))
			break
		}
		fmt.Fprintf(tw, "  %s\t%.1f%%\t%d\t%s\t%s\n", units.Bytes(s.Bytes), s.Share*100, s.Count,
			snapshotSite(t, s.Key), snapshotSite(t, s.Via))
	}
	tw.Flush()
}

// printSnapshotBreakdown writes the category x phase table of one moment.
func printSnapshotBreakdown(w io.Writer, t translate, b snapshot.Breakdown) {
	if len(b.Categories) == 0 {
		return
	}
	phases := []string{"forward", "backward", "optimizer", "other"}
	fmt.Fprintln(w, t("top.by_category"))
	tw := newTable(w)
	fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t("top.col.category"), t("top.col.bytes"), t("top.col.share"),
		t("top.col.forward"), t("top.col.backward"), t("top.col.optimizer"), t("top.col.other"), t("top.col.conf"))
	for _, c := range b.Categories {
		fmt.Fprintf(tw, "  %s\t%s\t%.1f%%", c.Category, units.Bytes(c.Bytes), c.Share*100)
		for _, p := range phases {
			fmt.Fprintf(tw, "\t%s", snapshotBytesOrDash(c.ByPhase[p]))
		}
		fmt.Fprintf(tw, "\t%s\n", c.Confidence)
	}
	fmt.Fprintf(tw, "  %s\t%s\t100.0%%", t("top.total"), units.Bytes(b.Total))
	for _, p := range phases {
		fmt.Fprintf(tw, "\t%s", snapshotBytesOrDash(b.Phases[p]))
	}
	fmt.Fprintln(tw, "\t")
	tw.Flush()
}

func snapshotBytesOrDash(n int64) string {
	if n == 0 {
		return "-"
	}
	return units.Bytes(n)
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

// snapshotSite is a site (or via) for a text table: C++ frames shortened,
// escaped for the terminal, and the JSON's "<no stack recorded>" in t's
// language.
func snapshotSite(t translate, key string) string {
	if key == snapshot.NoStack {
		return t("snap.no_stack")
	}
	return termsafe.Line(snapshotShortName(key))
}
