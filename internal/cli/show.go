package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/torchmem/torchmem/internal/i18n"
	"github.com/torchmem/torchmem/internal/identity"
	"github.com/torchmem/torchmem/internal/report"
	"github.com/torchmem/torchmem/internal/store"
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
			return showText(env.Stdout, d, events, env)
		},
	}
	cmd.Flags().StringVar(&dbPath, "db", "", "history database (default: the store torchmem run writes)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the run, its events and steps as JSON (samples: torchmem report --json)")
	cmd.Flags().IntVar(&events, "events", 30, "show at most the last N events")
	return cmd
}

// showText prints the run for people in env's language; a stored
// post-mortem keeps the English it was recorded in, under a translated
// frame (Summary.PrintIn).
func showText(w io.Writer, d *report.Data, maxEvents int, env *Env) error {
	r := d.Run
	t := env.tr()
	// The labels line up in one column, however wide each is in the language.
	label := func(id string) string { return i18n.PadRight(t(id), showLabelWidth(t)) }
	fmt.Fprintf(w, "%s%s (%s)\n", label("show.run"), r.ID, r.Status)
	fmt.Fprintf(w, "%s%s\n", label("show.command"), termsafe.Line(strings.Join(r.Command, " ")))
	fmt.Fprintf(w, "%s%s\n", label("show.started"), t("show.started_in", r.Start.Local().Format("2006-01-02 15:04:05"), termsafe.Line(r.Cwd)))
	fmt.Fprintf(w, "%s%s\n", label("show.duration"), t("show.duration_text", runsDuration(r), runsExit(r), r.Samples))
	if who := identity.FromLabels(r.Labels).Short(); who != "" { // the pod, Slurm step or container it ran in
		fmt.Fprintf(w, "%s%s\n", label("show.who"), termsafe.Line(who))
	}
	if len(r.Limits) > 0 {
		fmt.Fprintf(w, "%s%s\n", label("show.settings"), termsafe.Line(showSettings(r.Limits)))
	}
	for _, k := range slices.Sorted(maps.Keys(r.Labels)) { // a stable order, run after run
		fmt.Fprintf(w, "%s%s=%s\n", label("show.label"), termsafe.Line(k), termsafe.Line(r.Labels[k]))
	}
	var verdicts map[string]string // the English verdict → the reader's, for the exit event
	if len(r.Summary) > 0 {
		var s supervisor.Summary
		if err := json.Unmarshal(r.Summary, &s); err != nil {
			return fmt.Errorf("decode summary of run %s: %w", r.ID, err)
		}
		fmt.Fprintln(w)
		s.PrintIn(w, r.ID, env.lang())
		if env.lang() == i18n.ZH && s.ZH != nil && s.ZH.Verdict != "" {
			verdicts = map[string]string{s.Verdict: s.ZH.Verdict}
		}
	} else if len(r.Peaks) > 0 {
		fmt.Fprintln(w, label("show.peaks")+showPeaks(r.Peaks))
	}
	evs := d.Events
	if len(evs) > maxEvents {
		fmt.Fprint(w, t("show.events_last", maxEvents, len(evs)))
		evs = evs[len(evs)-maxEvents:]
	} else if len(evs) > 0 {
		fmt.Fprint(w, t("show.events"))
	}
	tw := newTable(w)
	for _, e := range evs {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", e.Time.Local().Format("15:04:05.000"),
			termsafe.Line(e.Source), termsafe.Line(e.Kind), termsafe.Line(showEventMessage(env, e, verdicts)))
	}
	return tw.Flush()
}

// showLabelWidth is the column the values of show's header start at: the
// widest label and a space (9 in English: "duration ").
func showLabelWidth(t func(string, ...any) string) int {
	w := 0
	for _, id := range []string{"show.run", "show.command", "show.started", "show.duration", "show.who", "show.settings", "show.label", "show.peaks"} {
		w = max(w, i18n.Width(t(id)))
	}
	return w + 1
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

// showEventMessage is an event's message as stored (English: history is
// language-neutral), or, in another language, a policy event's condition
// worded from its data when the message is that condition alone, and the
// exit event's verdict as the run's summary keeps it in that language; an
// action's English tail ("; cleanup sent to 2 process(es)") keeps the
// whole message English rather than mixing the two.
func showEventMessage(env *Env, e store.Event, verdicts map[string]string) string {
	if v, ok := verdicts[e.Message]; ok && e.Kind == "exit" && e.Source == "supervisor" {
		return v // the post-mortem's verdict, kept in zh with the run
	}
	if env.lang() == i18n.EN || e.Source != "policy" || len(e.Data) == 0 {
		return e.Message
	}
	var d struct {
		Rule      string `json:"rule_name"`
		Metric    string `json:"metric"`
		Value     string `json:"value_text"`
		Threshold string `json:"threshold_text"`
	}
	if json.Unmarshal(e.Data, &d) != nil || d.Metric == "" ||
		e.Message != fmt.Sprintf("%s: %s = %s (threshold %s)", d.Rule, d.Metric, d.Value, d.Threshold) {
		return e.Message
	}
	return env.tr()("show.event_policy", d.Rule, d.Metric, d.Value, d.Threshold)
}
