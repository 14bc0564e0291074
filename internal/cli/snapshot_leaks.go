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

func newSnapshotLeaksCmd(env *Env) *cobra.Command {
	var asJSON bool
	var opt snapshot.LeakOptions
	cmd := &cobra.Command{
		Use:   "leaks FILE",
		Short: "Allocations alive at the end that accumulated step after step, by site",
		Long: `Find sites whose allocations, made during the trace and still alive at the
snapshot, piled up step after step. Steps are told apart by a repeating
record_function scope (Optimizer.step, recorded by PyTorch in
external_annotations) or, without one, by blocks of the same size left behind
repeatedly. Needs a snapshot with a trace (_record_memory_history).`,
		Args: exactArgs(argSnapshot, "FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := snapshotLoad(env, args[0])
			if err != nil {
				return err
			}
			leaks := snapshot.FindLeaks(s, opt)
			if asJSON {
				return writeJSON(env.Stdout, leaks)
			}
			if len(s.Traces) == 0 {
				fmt.Fprintln(env.Stdout, snapshotTr(env)("snap.no_trace"))
				return nil
			}
			return printSnapshotLeaks(env.Stdout, snapshotTr(env), leaks)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the leaks as JSON (sizes in bytes)")
	cmd.Flags().IntVar(&opt.Depth, "depth", 1, "user frames that make up a site")
	cmd.Flags().IntVar(&opt.MinSteps, "min-steps", 3, "a site must have grown in at least this many steps")
	cmd.Flags().Float64Var(&opt.MinSpread, "min-spread", 0.25, "and its survivors must span this share of the trace")
	return cmd
}

func printSnapshotLeaks(w io.Writer, t translate, l *snapshot.Leaks) error {
	if len(l.Leaks) == 0 {
		fmt.Fprintln(w, t("leaks.none"))
		return nil
	}
	fmt.Fprintln(w, t("leaks.header", snapshotStepSource(t, l.StepSource)))
	tw := newTable(w)
	fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\n", t("leaks.col.growth"), t("leaks.col.steps"), t("leaks.col.alive"),
		t("top.col.count"), t("leaks.col.device"), t("top.col.site"), t("top.col.via"))
	for _, k := range l.Leaks {
		fmt.Fprintf(tw, "  %s\t%d\t%s\t%d\t%d\t%s\t%s\n", units.Bytes(int64(k.BytesPerStep)), k.Steps,
			units.Bytes(k.Bytes), k.Count, k.Device, snapshotSite(t, k.Key), snapshotSite(t, k.Via))
	}
	return tw.Flush()
}

// snapshotStepSource is how leaks told steps apart, in t's language:
// "annotation NAME" or "repeated sizes" in the JSON.
func snapshotStepSource(t translate, src string) string {
	if name, ok := strings.CutPrefix(src, "annotation "); ok {
		return t("leaks.src_annotation", termsafe.Line(name))
	}
	if src == "repeated sizes" {
		return t("leaks.src_sizes")
	}
	return termsafe.Line(src)
}
