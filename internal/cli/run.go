package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/torchmem/torchmem/internal/runner"
)

func init() { register("run", newRunCmd) }

func newRunCmd(env *Env) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [flags] -- COMMAND [ARG...]",
		Short: "Run a training command under memory limits with the PyTorch hook, live status, threshold actions, history and a post-mortem",
		Long: `Run COMMAND exactly as a shell would (same stdout/stderr, same exit status) inside
its own memory cgroup and process group, with the in-process PyTorch hook, and
explain at the end how it went: peaks, whether and why it died, what to change.`,
		Example: `  torchmem run --memory-max 64G --gpu-threshold 90% --numa auto -- python train.py --epochs 3
  torchmem run -- torchrun --nproc-per-node 8 train.py`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("no command to run: torchmem run [flags] -- COMMAND [ARG...]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			f.oomSet = cmd.Flags().Changed("oom-score-adj")
			return runRun(env, &f, args)
		},
	}
	cmd.Flags().SetInterspersed(false)
	f.register(cmd)
	return cmd
}

func runRun(env *Env, f *runFlags, argv []string) error {
	res, err := runner.Run(context.Background(), f.config(env, argv))
	if err != nil {
		return err
	}
	res.Summary.Print(env.Stderr, res.ID)
	if res.Recorded {
		if res.HistoryErr != nil {
			fmt.Fprintf(env.Stderr, "torchmem: history: %v\n", res.HistoryErr)
		}
		fmt.Fprintln(env.Stderr, runDetailsHint(env.tr(), res.ID, f.db))
	}
	if res.ExitCode == 0 {
		return nil
	}
	return &ExitError{Code: res.ExitCode}
}

// runDetailsHint is the last line after a run: the commands that show it,
// with the --db it was recorded in (without it they would look in the
// default store and not find the run).
func runDetailsHint(t translate, id, db string) string {
	opt := ""
	if db != "" {
		opt = " --db " + shellQuote(db)
	}
	return t("run.details_hint", id, opt)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	safe := func(r rune) bool { // a shell's special characters are all ASCII
		return r > unicode.MaxASCII && unicode.IsPrint(r) && !unicode.IsSpace(r) ||
			strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:,@", r)
	}
	if s != "" && strings.IndexFunc(s, func(r rune) bool { return !safe(r) }) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellJoin: a command line as a shell would take it back (an empty
// argument or one with spaces quoted), so that a command shown can be
// copied and run again.
func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}
