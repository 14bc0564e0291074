package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/torchmem/torchmem/internal/i18n"
	"github.com/torchmem/torchmem/internal/snapshot"
	"github.com/torchmem/torchmem/internal/units"
)

func newSnapshotDiffCmd(env *Env) *cobra.Command {
	var asJSON, all bool
	var depth, limit int
	cmd := &cobra.Command{
		Use:   "diff A B",
		Short: "What grew between two snapshots, by site",
		Args:  exactArgs(argSnapshot, "A", "B"),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := snapshotLoad(env, args[0])
			if err != nil {
				return err
			}
			b, err := snapshotLoad(env, args[1])
			if err != nil {
				return err
			}
			d := snapshot.Compare(a, b, depth)
			if asJSON {
				return writeJSON(env.Stdout, d)
			}
			return printSnapshotDiff(env.Stdout, snapshotTr(env), d, limit, all)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print every site as JSON (sizes in bytes)")
	cmd.Flags().IntVar(&depth, "depth", 1, "user frames that make up a site")
	cmd.Flags().IntVarP(&limit, "limit", "n", 20, "sites to show (0: all)")
	cmd.Flags().BoolVar(&all, "all", false, "also list sites that did not change")
	return cmd
}

func printSnapshotDiff(w io.Writer, t translate, d *snapshot.Diff, limit int, all bool) error {
	b := units.Bytes
	before := map[int64]snapshot.DeviceSummary{}
	for _, x := range d.Before {
		before[x.Device] = x
	}
	for _, x := range d.After {
		p := before[x.Device]
		fmt.Fprintln(w, t("diff.device", x.Device))
		fmt.Fprintf(w, "  %s %s\n", i18n.PadRight(t("diff.reserved"), 10), t("diff.change", b(p.Reserved), b(x.Reserved), snapshotSigned(x.Reserved-p.Reserved)))
		fmt.Fprintf(w, "  %s %s\n", i18n.PadRight(t("diff.allocated"), 10), t("diff.change", b(p.Allocated), b(x.Allocated), snapshotSigned(x.Allocated-p.Allocated)))
	}
	tw := newTable(w)
	fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", t("diff.col.delta"), t("diff.col.before"), t("diff.col.after"),
		t("top.col.count"), t("top.col.site"), t("top.col.via"))
	shown := 0
	for _, s := range d.Sites {
		if s.DeltaBytes == 0 && !all {
			continue
		}
		if limit > 0 && shown == limit {
			fmt.Fprintf(tw, "  …\t\t\t\t%s\t\n", t("diff.more"))
			break
		}
		shown++
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d -> %d\t%s\t%s\n", snapshotSigned(s.DeltaBytes), b(s.BeforeBytes), b(s.AfterBytes),
			s.BeforeCount, s.AfterCount, snapshotSite(t, s.Site), snapshotSite(t, s.Via))
	}
	if shown == 0 {
		fmt.Fprintln(tw, t("diff.no_change"))
	}
	return tw.Flush()
}

// snapshotSigned prints a change of size in the same units as the sizes
// beside it (+1.15 GiB, -512 B), not always in MiB.
func snapshotSigned(n int64) string {
	if n < 0 {
		return "-" + units.Bytes(-n)
	}
	return "+" + units.Bytes(n)
}
