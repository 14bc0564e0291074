package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/torchmem/torchmem/internal/lint"
)

func init() { register("lint", newLintCmd) }

// lintFlags are the command-line settings of torchmem lint.
type lintFlags struct {
	python  string
	asJSON  bool
	sarif   bool
	format  string
	noHost  bool
	list    bool
	disable []string
	fix     bool
	diff    bool
	torch   string
}

func newLintCmd(env *Env) *cobra.Command {
	var fl lintFlags
	cmd := &cobra.Command{
		Use:   "lint FILE|DIR...",
		Short: "Find memory anti-patterns in PyTorch training scripts",
		Long: `Report code patterns that make PyTorch jobs leak or waste host and GPU memory,
compiler-style (file:line:col: TM002 message), each with the fix.

Files are parsed by the Python that runs the jobs (--python); directories are
walked for *.py. Suppress one line with "# torchmem: ignore[TM002]" (or a bare
"# torchmem: ignore"); configure rules in pyproject.toml under [tool.torchmem].
Exit status: 0 clean, 1 findings, 2 usage or parse-tool errors.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLintCmd(cmd, env, fl, args)
		},
	}
	// A bad flag is a usage error (2), never mistaken for findings (1).
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &ExitError{Code: 2, Err: err}
	})
	f := cmd.Flags()
	f.StringVar(&fl.python, "python", "python3", "Python interpreter that parses the files (the one the jobs run with; 3.8+)")
	f.BoolVar(&fl.asJSON, "json", false, "print findings as a JSON array (same as --format json)")
	f.BoolVar(&fl.sarif, "sarif", false, "print findings as SARIF 2.1.0 (same as --format sarif)")
	f.StringVar(&fl.format, "format", "text", "output format: text, json or sarif (SARIF 2.1.0 for code scanning)")
	f.BoolVar(&fl.noHost, "no-host", false, "do not read this machine's limits (TM013): lint away from the machine that runs the jobs")
	f.StringSliceVar(&fl.disable, "disable", nil, "rules to turn off (ids or names, comma-separated)")
	f.StringVar(&fl.torch, "torch-version", "", "PyTorch version the fixes are written for (e.g. 1.13); default: a pin near each file, else the torch --python imports")
	f.BoolVar(&fl.list, "list-rules", false, "print the rules (id, name, severity, why) and exit")
	f.BoolVar(&fl.fix, "fix", false, "apply the mechanical fixes in place (TM004, TM011, inference-mode, device-at-creation), then report what is left")
	f.BoolVar(&fl.diff, "diff", false, "print the mechanical fixes as a unified diff instead of writing them")
	return cmd
}

func runLintCmd(cmd *cobra.Command, env *Env, fl lintFlags, args []string) error {
	if fl.asJSON && fl.sarif {
		return &ExitError{Code: 2, Err: fmt.Errorf("--json and --sarif: choose one format")}
	}
	if fl.asJSON {
		fl.format = "json"
	}
	if fl.sarif {
		fl.format = "sarif"
	}
	if fl.list {
		return writeLintRules(env, fl.format == "json")
	}
	if len(args) == 0 {
		return &ExitError{Code: 2, Err: fmt.Errorf("lint: give at least one file or directory (or --list-rules)")}
	}
	switch fl.format {
	case "text", "json", "sarif":
	default:
		return &ExitError{Code: 2, Err: fmt.Errorf("--format %q: want text, json or sarif", fl.format)}
	}
	opts := lint.Options{Python: fl.python, Disable: fl.disable, TorchVersion: fl.torch}
	if !fl.noHost {
		h := lint.ReadHost(env.ProcRoot, env.Root)
		opts.Host = &h
	}
	if fl.fix || fl.diff {
		if err := runLintFix(cmd, env, fl, args, opts); err != nil || fl.diff {
			return err
		}
	}
	res, err := lint.Lint(cmd.Context(), args, opts)
	if err != nil {
		// 2, not 1: a broken lint run must not look like "findings".
		return &ExitError{Code: 2, Err: err}
	}
	if err := writeLint(env, fl.format, res); err != nil {
		return err
	}
	if len(res.Findings) > 0 {
		return &ExitError{Code: 1}
	}
	return nil
}

// runLintFix prints the fixes as a diff (--diff) or writes them (--fix)
// and says what was fixed on stderr.
func runLintFix(cmd *cobra.Command, env *Env, fl lintFlags, args []string, opts lint.Options) error {
	fixes, err := lint.Fix(cmd.Context(), args, opts)
	if err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	if fl.diff {
		for _, fx := range fixes {
			fmt.Fprint(env.Stdout, lint.UnifiedDiff(fx))
		}
		return nil
	}
	if err := lint.WriteFixes(fixes); err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	for _, fx := range fixes {
		for _, a := range fx.Applied {
			fmt.Fprintf(env.Stderr, "torchmem: fixed %s:%d: %s (%s)\n", fx.Path, a.Line, a.Rule, a.What)
		}
	}
	return nil
}

func writeLint(env *Env, format string, res *lint.Result) error {
	for _, n := range res.Notes {
		fmt.Fprintf(env.Stderr, "torchmem: note: %s\n", n)
	}
	switch format {
	case "json":
		out := res.Findings
		if out == nil {
			out = []lint.Finding{}
		}
		return writeJSON(env.Stdout, out)
	case "sarif":
		return writeJSON(env.Stdout, lint.SARIF(res.Findings, Version))
	}
	if err := lint.WriteText(env.Stdout, res.Findings, env.lang()); err != nil {
		return err
	}
	if len(res.Findings) > 0 {
		t := env.tr()
		findings := t(lintPlural(len(res.Findings), "lint.findings_one", "lint.findings"), len(res.Findings))
		files := t(lintPlural(res.Files, "lint.files_one", "lint.files"), res.Files)
		fmt.Fprintln(env.Stderr, t("lint.summary", findings, files))
	}
	return nil
}

// lintPlural is the message id for a count: one's when n is 1.
func lintPlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// writeLintRules prints the rule catalogue as a table or JSON.
func writeLintRules(env *Env, asJSON bool) error {
	rules := lint.Rules()
	if asJSON {
		return writeJSON(env.Stdout, rules)
	}
	tw := newTable(env.Stdout)
	fmt.Fprintln(tw, env.tr()("lint.rules.header"))
	for _, r := range rules {
		summary, _ := r.Text(env.lang())
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.ID, r.Name, r.Severity, summary)
	}
	return tw.Flush()
}
