package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/torchmem/torchmem/internal/store"
	"github.com/torchmem/torchmem/internal/units"
)

func init() { register("runs", newRunsCmd) }

func newRunsCmd(env *Env) *cobra.Command {
	var dbPath, status, command string
	var limit int
	var asJSON bool
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
			runsTable(env.Stdout, list)
			return nil
		},
	}
	cmd.Flags().StringVar(&dbPath, "db", "", "history database (default: the store torchmem run writes)")
	cmd.Flags().StringVar(&status, "status", "", "only runs with this status (running, exited, killed, oom-killed, supervisor lost)")
	cmd.Flags().StringVar(&command, "command", "", "only runs whose command line contains this")
	cmd.Flags().IntVar(&limit, "limit", 20, "at most this many runs")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
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

func runsTable(w io.Writer, list []store.Run) {
	tw := newTable(w)
	fmt.Fprintln(tw, "ID\tSTART\tDURATION\tSTATUS\tEXIT\tPEAK HOST\tPEAK GPU\tCOMMAND")
	for _, r := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Start.Local().Format("2006-01-02 15:04:05"),
			runsDuration(r), r.Status, runsExit(r), runsPeak(r.Peaks, "cgroup_usage", "pss_total", "rss_total"),
			runsPeak(r.Peaks, runsGPUKeys(r.Peaks)...), runsCommand(r.Command, 60))
	}
	tw.Flush()
}

func runsDuration(r store.Run) string {
	end := time.Now()
	if r.End != nil {
		end = *r.End
	} else if r.LastSample != nil && r.Status != store.StatusRunning {
		end = *r.LastSample
	}
	return end.Sub(r.Start).Truncate(time.Second).String()
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
func runsPeak(p map[string]int64, keys ...string) string {
	for _, k := range keys {
		if v, ok := p[k]; ok && v > 0 {
			return units.Short(v)
		}
	}
	return "-"
}

func runsGPUKeys(p map[string]int64) []string {
	var out []string
	for k := range p {
		if strings.HasPrefix(k, "gpu") && strings.HasSuffix(k, "_used") && !strings.Contains(k, "job") {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func runsCommand(argv []string, n int) string {
	r := []rune(strings.Join(argv, " ")) // cut between characters, not inside one
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return string(r)
}
