package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/torchmem/torchmem/internal/identity"
	"github.com/torchmem/torchmem/internal/report"
	"github.com/torchmem/torchmem/internal/supervisor"
	"github.com/torchmem/torchmem/internal/termsafe"
	"github.com/torchmem/torchmem/internal/units"
)

func init() { register("show", newShowCmd) }

func newShowCmd(env *Env) *cobra.Command {
	var dbPath string
	var asJSON bool
	var events int
	cmd := &cobra.Command{
		Use:   "show RUN",
		Short: "Show one run from the history store: command, limits, peaks, post-mortem and events",
		Long:  "RUN is a run id, a unique prefix of one, or \"last\".",
		Args:  exactArgs(argRun, "RUN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			db, err := runsOpenDB(dbPath)
			if err != nil {
				return err
			}
			defer db.Close()
			d, err := report.Load(db, args[0], -1) // show prints no samples
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(env.Stdout, d)
			}
			return showText(env.Stdout, d, events)
		},
	}
	cmd.Flags().StringVar(&dbPath, "db", "", "history database (default: the store torchmem run writes)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the run, its events and steps as JSON (samples: torchmem report --json)")
	cmd.Flags().IntVar(&events, "events", 30, "show at most the last N events")
	return cmd
}

func showText(w io.Writer, d *report.Data, maxEvents int) error {
	r := d.Run
	fmt.Fprintf(w, "run      %s (%s)\n", r.ID, r.Status)
	fmt.Fprintf(w, "command  %s\n", termsafe.Line(strings.Join(r.Command, " ")))
	fmt.Fprintf(w, "started  %s in %s\n", r.Start.Local().Format("2006-01-02 15:04:05"), termsafe.Line(r.Cwd))
	fmt.Fprintf(w, "duration %s, exit %s, %d samples stored\n", runsDuration(r), runsExit(r), r.Samples)
	if who := identity.FromLabels(r.Labels).Short(); who != "" { // the pod, Slurm step or container it ran in
		fmt.Fprintf(w, "who      %s\n", termsafe.Line(who))
	}
	if len(r.Limits) > 0 {
		fmt.Fprintf(w, "settings %s\n", termsafe.Line(showSettings(r.Limits)))
	}
	for _, k := range slices.Sorted(maps.Keys(r.Labels)) { // a stable order, run after run
		fmt.Fprintf(w, "label    %s=%s\n", termsafe.Line(k), termsafe.Line(r.Labels[k]))
	}
	if len(r.Summary) > 0 {
		var s supervisor.Summary
		if err := json.Unmarshal(r.Summary, &s); err != nil {
			return fmt.Errorf("decode summary of run %s: %w", r.ID, err)
		}
		fmt.Fprintln(w)
		s.Print(w, r.ID)
	} else if len(r.Peaks) > 0 {
		fmt.Fprintln(w, "peaks    "+showPeaks(r.Peaks))
	}
	evs := d.Events
	if len(evs) > maxEvents {
		fmt.Fprintf(w, "\nevents (last %d of %d):\n", maxEvents, len(evs))
		evs = evs[len(evs)-maxEvents:]
	} else if len(evs) > 0 {
		fmt.Fprintln(w, "\nevents:")
	}
	tw := newTable(w)
	for _, e := range evs {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", e.Time.Local().Format("15:04:05.000"),
			termsafe.Line(e.Source), termsafe.Line(e.Kind), termsafe.Line(e.Message))
	}
	return tw.Flush()
}

func showPeaks(p map[string]int64) string {
	keys := slices.Sorted(maps.Keys(p)) // like the labels: the same order every time
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + " " + units.Bytes(p[k])
	}
	return strings.Join(parts, ", ")
}

// showSettings writes the run's recorded settings as the flags that give
// them ("--interval 1s --memory-max 400M"), sorted; the raw JSON when it
// is not an object.
func showSettings(raw json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return string(raw)
	}
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("--%s %v", strings.ReplaceAll(k, "_", "-"), m[k])
	}
	return strings.Join(parts, " ")
}
