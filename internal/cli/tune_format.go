package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/torchmem/torchmem/internal/tune"
)

// writeTunePlan prints the plan in env's language: keys, values, paths
// and file contents stay as they are (they are what is written).
func writeTunePlan(w io.Writer, env *Env, p tune.Plan) error {
	t := env.tr()
	fmt.Fprint(w, t("tune.plan.header", p.Profile))
	if p.Persistence != "" {
		fmt.Fprint(w, t("tune.plan.persisted_by", p.Persistence))
	}
	fmt.Fprintln(w)
	tw := newTable(w)
	fmt.Fprintln(tw, t("tune.plan.columns"))
	for _, c := range p.Changes {
		where := c.Persist
		if n := c.NoteIn(env.lang()); n != "" {
			where = strings.TrimSpace(where + " " + "(" + n + ")")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Key, orDash(c.CurrentText()), c.Target, t("tune.action."+c.Action), where)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range p.Changes {
		if c.Action == tune.ActAdvice {
			fmt.Fprint(w, t("tune.plan.shm_advice", c.Key, c.Current))
		}
	}
	for _, f := range p.Files {
		if f.Link != "" {
			fmt.Fprint(w, t("tune.plan.link", f.Path, f.Link))
			continue
		}
		fmt.Fprint(w, t("tune.plan.write", f.Path))
		for _, line := range strings.Split(strings.TrimRight(f.Content, "\n"), "\n") {
			fmt.Fprintf(w, "    %s\n", line)
		}
	}
	for _, c := range p.Commands {
		fmt.Fprint(w, t("tune.plan.run", strings.Join(c, " ")))
	}
	return nil
}

func writeTuneStatus(w io.Writer, env *Env, st tune.State) error {
	t := env.tr()
	if st.Profile == "" {
		_, err := fmt.Fprintln(w, t("tune.status.none"))
		return err
	}
	state := t("tune.status.applied")
	if !st.Applied {
		state = t("tune.status.incomplete")
	}
	fmt.Fprint(w, t("tune.status.header", st.Profile, state, st.Time, st.Journal))
	// Two tables: in one, the long file paths widened the live-value
	// columns past 80.
	tw := newTable(w)
	fmt.Fprintln(tw, t("tune.status.live"))
	for _, it := range st.Live {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", it.Key, it.Target, it.Now, driftWord(env, it))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	tw = newTable(w)
	fmt.Fprintln(tw, t("tune.status.files"))
	for _, it := range st.Files {
		fmt.Fprintf(tw, "%s\t%s\n", it.Key, driftWord(env, it))
	}
	return tw.Flush()
}

func driftWord(env *Env, it tune.StatusItem) string {
	if it.Drift {
		return env.tr()("tune.status.drifted", it.NoteIn(env.lang()))
	}
	return env.tr()("tune.status.ok")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
