package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"
	"github.com/torchmem/torchmem/internal/i18n"
	"github.com/torchmem/torchmem/internal/store"
	"github.com/torchmem/torchmem/internal/termsafe"
	"github.com/torchmem/torchmem/internal/textwrap"
	"github.com/torchmem/torchmem/internal/units"
)

func init() { register("runs", newRunsCmd) }

func newRunsCmd(env *Env) *cobra.Command {
	var dbPath, status, command string
	var limit int
	var asJSON, wide bool
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List supervised runs from the history store, newest first, with their peaks and outcome",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			db, err := runsOpenDB(dbPath)
			if err != nil {
				return err
			}
			defer db.Close()
			list, err := db.Runs(store.RunFilter{Status: store.Status(status), Command: command, Limit: limit})
			if err != nil {
				return err
			}
			if asJSON {
				if list == nil {
					list = []store.Run{}
				}
				return writeJSON(env.Stdout, list)
			}
			width := 0 // --wide: never cut the command
			if !wide {
				width = runsWidth(env.Stdout)
			}
			runsTable(env.Stdout, list, width, env.tr())
			return nil
		},
	}
	cmd.Flags().StringVar(&dbPath, "db", "", "history database (default: the store torchmem run writes)")
	cmd.Flags().StringVar(&status, "status", "", "only runs with this status (running, exited, killed, oom-killed, stopped, supervisor lost)")
	cmd.Flags().StringVar(&command, "command", "", "only runs whose command line contains this")
	cmd.Flags().IntVar(&limit, "limit", 20, "at most this many runs")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&wide, "wide", false, "print whole command lines (the table otherwise fits the terminal: $COLUMNS, the tty, else 80)")
	return cmd
}

// runsOpenDB opens the history store for reading commands; a missing
// database is an error that says where it was looked for.
func runsOpenDB(path string) (*store.DB, error) {
	if path == "" {
		path = store.DefaultPath()
	}
	// Reading must not create an empty store (and its directories) at a
	// mistyped path and then list nothing as if that were the history.
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no run history at %s (torchmem run records there; --db for another store)", path)
	}
	db, err := store.Open(path, store.Options{})
	if err != nil {
		return nil, fmt.Errorf("open history %s: %w", path, err)
	}
	return db, nil
}

// runsTable prints one line per run, headed in t's language. width > 0
// cuts the command so every line fits in width display columns; 0 prints
// it whole.
func runsTable(w io.Writer, list []store.Run, width int, t func(string, ...any) string) {
	rows := [][]string{{t("runs.id"), t("runs.start"), t("runs.time"), t("runs.status"), t("runs.exit"), t("runs.host"), t("runs.gpu")}}
	for _, r := range list {
		rows = append(rows, []string{r.ID, r.Start.Local().Format("01-02 15:04"), runsShortDuration(runsLength(r)), string(r.Status),
			runsExit(r), runsPeak(r.Peaks, store.PeakCgroupUsage, store.PeakPSSTotal, store.PeakRSSTotal), runsPeak(r.Peaks, runsGPUKeys(r.Peaks)...)})
	}
	const gap = 2
	widths := make([]int, len(rows[0]))
	used := 0
	for i := range widths {
		for _, row := range rows {
			widths[i] = max(widths[i], i18n.Width(row[i]))
		}
		used += widths[i] + gap
	}
	cmdWidth := 0
	if width > 0 {
		cmdWidth = max(width-used, 8) // a terminal too narrow for the fixed columns still gets a hint of the command
	}
	for i, row := range rows {
		var b strings.Builder
		for c, cell := range row {
			b.WriteString(cell)
			b.WriteString(strings.Repeat(" ", widths[c]-i18n.Width(cell)+gap))
		}
		if i == 0 {
			b.WriteString(t("runs.command"))
		} else {
			b.WriteString(runsCommand(list[i-1].Command, cmdWidth))
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// runsWidth is the width the table must fit: $COLUMNS, else the terminal
// stdout is, else 80.
func runsWidth(out io.Writer) int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if f, ok := out.(*os.File); ok && term.IsTerminal(f.Fd()) {
		if n, _, err := term.GetSize(f.Fd()); err == nil && n > 0 {
			return n
		}
	}
	return 80
}

func runsDuration(r store.Run) string {
	return runsLength(r).Truncate(time.Second).String()
}

func runsLength(r store.Run) time.Duration {
	end := time.Now()
	if r.End != nil {
		end = *r.End
	} else if r.LastSample != nil && r.Status != store.StatusRunning {
		end = *r.LastSample
	}
	return end.Sub(r.Start)
}

// runsShortDuration is d in at most two units (45s, 12m05s, 3h04m, 2d03h):
// seconds do not matter once a job has run for hours.
func runsShortDuration(d time.Duration) string {
	s := int64(max(d, 0) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
	}
	return fmt.Sprintf("%dd%02dh", s/86400, s%86400/3600)
}

func runsExit(r store.Run) string {
	switch {
	case r.ExitCode != nil:
		return fmt.Sprint(*r.ExitCode)
	case r.Signal != nil:
		return fmt.Sprintf("sig %d", *r.Signal)
	}
	return "-"
}

// runsPeak is the first measured of the named peaks, best source first
// (host: cgroup usage, else PSS, else RSS, which double-counts shared pages).
func runsPeak(p store.Peaks, keys ...store.PeakKey) string {
	for _, k := range keys {
		if v, ok := p.Get(k); ok && v > 0 {
			return units.Short(v)
		}
	}
	return "-"
}

// runsGPUKeys are the run's whole-device GPU peaks (store.PeakGPUUsed),
// sorted by name.
func runsGPUKeys(p store.Peaks) []store.PeakKey {
	var out []store.PeakKey
	for k := range p {
		if _, ok := store.PeakKey(k).GPUUsedIndex(); ok {
			out = append(out, store.PeakKey(k))
		}
	}
	slices.Sort(out)
	return out
}

// runsCommand is the command line cut to n characters with an ellipsis
// (n <= 0: whole); escaped before the cut, so the cut counts what is shown.
func runsCommand(argv []string, n int) string {
	return textwrap.Cut(termsafe.Line(shellJoin(argv)), n)
}
