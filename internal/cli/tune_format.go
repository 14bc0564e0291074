package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/torchmem/torchmem/internal/tune"
)

func writeTunePlan(w io.Writer, p tune.Plan) error {
	fmt.Fprintf(w, "torchmem tune plan: profile %s", p.Profile)
	if p.Persistence != "" {
		fmt.Fprintf(w, " (THP persisted by %s)", p.Persistence)
	}
	fmt.Fprintln(w)
	tw := newTable(w)
	fmt.Fprintln(tw, "SETTING\tNOW\tTARGET\tACTION\tPERSISTED IN / NOTE")
	for _, c := range p.Changes {
		where := c.Persist
		if c.Note != "" {
			where = strings.TrimSpace(where + " " + "(" + c.Note + ")")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Key, orDash(c.Current), c.Target, c.Action, where)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range p.Changes {
		if c.Action == tune.ActAdvice {
			fmt.Fprintf(w, "\nadvice (%s): /dev/shm is small: %s. torchmem never remounts it. For a host: add 'tmpfs /dev/shm tmpfs defaults,size=50%% 0 0' to /etc/fstab and run mount -o remount /dev/shm when no job runs; for containers: --shm-size=16g or --ipc=host.\n", c.Key, c.Current)
		}
	}
	for _, f := range p.Files {
		if f.Link != "" {
			fmt.Fprintf(w, "\nlink %s -> %s\n", f.Path, f.Link)
			continue
		}
		fmt.Fprintf(w, "\nwrite %s:\n", f.Path)
		for _, line := range strings.Split(strings.TrimRight(f.Content, "\n"), "\n") {
			fmt.Fprintf(w, "    %s\n", line)
		}
	}
	for _, c := range p.Commands {
		fmt.Fprintf(w, "\nrun (on this host only): %s\n", strings.Join(c, " "))
	}
	return nil
}

func writeTuneStatus(w io.Writer, st tune.State) error {
	if st.Profile == "" {
		_, err := fmt.Fprintln(w, "nothing applied by torchmem tune")
		return err
	}
	state := "applied"
	if !st.Applied {
		state = "INCOMPLETE (an apply was interrupted: run torchmem tune revert)"
	}
	fmt.Fprintf(w, "profile %s %s at %s (journal %s)\n", st.Profile, state, st.Time, st.Journal)
	// Two tables: in one, the long file paths widened the live-value
	// columns past 80.
	tw := newTable(w)
	fmt.Fprintln(tw, "LIVE VALUE\tTARGET\tNOW\tSTATE")
	for _, it := range st.Live {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", it.Key, it.Target, it.Now, driftWord(it))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	tw = newTable(w)
	fmt.Fprintln(tw, "FILE\tSTATE")
	for _, it := range st.Files {
		fmt.Fprintf(tw, "%s\t%s\n", it.Key, driftWord(it))
	}
	return tw.Flush()
}

func driftWord(it tune.StatusItem) string {
	if it.Drift {
		return "DRIFTED: " + it.Note
	}
	return "ok"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
