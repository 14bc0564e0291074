package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/torchmem/torchmem/internal/report"
)

func init() { register("report", newReportCmd) }

func newReportCmd(env *Env) *cobra.Command {
	var dbPath, html string
	var asJSON bool
	var points int
	cmd := &cobra.Command{
		Use:   "report RUN (-o FILE | --json)",
		Short: "Write a self-contained HTML report of a run (charts of every memory series, events, post-mortem), or its raw data as JSON",
		Long: `RUN is a run id, a unique prefix of one, or "last". The HTML file inlines its
charting code (uPlot) and data: it opens offline and can be mailed as is.`,
		Example: "  torchmem report last -o report.html\n  torchmem report k3m9tq --json > run.json",
		Args:    exactArgs(argRun, "RUN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (html == "") == !asJSON {
				return fmt.Errorf("give -o FILE (the HTML report) or --json")
			}
			db, err := runsOpenDB(dbPath)
			if err != nil {
				return err
			}
			defer db.Close()
			d, err := report.Load(db, args[0], max(points, 0)) // 0 and below: every sample
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(env.Stdout, d)
			}
			return reportWrite(html, d, env)
		},
	}
	cmd.Flags().StringVar(&dbPath, "db", "", "history database (default: the store torchmem run writes)")
	// -o/--output FILE names an output file in every command (snapshot
	// html -o too); --html FILE, the old spelling, still works.
	cmd.Flags().StringVarP(&html, "output", "o", "", "write the HTML report to this file")
	cmd.Flags().StringVar(&html, "html", "", "write the HTML report to this file")
	_ = cmd.Flags().MarkHidden("html")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print run, samples, events and steps as JSON")
	cmd.Flags().IntVar(&points, "points", 4000, "at most this many samples (bucket maxima beyond, so peaks survive)")
	return cmd
}

func reportWrite(path string, d *report.Data, env *Env) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	if err := report.WriteHTML(f, d, env.lang()); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	fmt.Fprintln(env.Stderr, env.tr()("report.wrote", path, d.Run.ID))
	return nil
}
