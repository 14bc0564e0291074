package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/torchmem/torchmem/internal/tune"
)

func init() { register("tune", newTuneCmd) }

type tuneFlags struct {
	root, profile, persist string
	asJSON, dryRun, yes    bool
}

func (f *tuneFlags) options(env *Env) tune.Options {
	o := tune.Options{Root: f.root, DryRun: f.dryRun, Persist: f.persist, Run: tuneRun}
	if filepath.Clean(f.root) == "/" {
		o.ProcRoot, o.SysRoot = env.ProcRoot, env.SysRoot
	}
	return o
}

func tuneRun(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

func newTuneCmd(env *Env) *cobra.Command {
	f := &tuneFlags{}
	cmd := &cobra.Command{
		Use:   "tune",
		Short: "Apply the host settings doctor recommends, persistently and reversibly",
		Long: `tune applies a profile (training or inference) of kernel, THP and limit
settings. plan shows the exact changes; apply (root, --yes) writes a journal of
every previous value to /var/lib/torchmem/tune/ first, then changes live values
and persists them (/etc/sysctl.d/90-torchmem.conf, a tuned profile or a systemd
unit for THP, /etc/security/limits.d/90-torchmem.conf); revert restores
everything byte for byte; status shows what is applied and any drift.
--root DIR works on a directory tree instead of this host.`,
	}
	p := cmd.PersistentFlags()
	p.StringVar(&f.root, "root", env.Root, "operate on this directory tree instead of / (its proc/, sys/ and etc/)")
	p.StringVar(&f.profile, "profile", "training", "profile: training or inference")
	p.StringVar(&f.persist, "persist", "auto", "THP persistence: auto (tuned if installed, else systemd), tuned or systemd")
	p.BoolVar(&f.asJSON, "json", false, "print JSON")
	p.BoolVar(&f.dryRun, "dry-run", false, "show what would be done, change nothing")
	cmd.AddCommand(tunePlanCmd(env, f), tuneApplyCmd(env, f), tuneRevertCmd(env, f), tuneStatusCmd(env, f), tuneDropCachesCmd(env, f))
	return cmd
}

func tunePlanCmd(env *Env, f *tuneFlags) *cobra.Command {
	return &cobra.Command{
		Use: "plan", Short: "Show the exact changes apply would make", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			pl, err := tune.MakePlan(f.options(env), f.profile)
			if err != nil {
				return err
			}
			if f.asJSON {
				return writeJSON(env.Stdout, pl)
			}
			return writeTunePlan(env.Stdout, env, pl)
		},
	}
}

func tuneApplyCmd(env *Env, f *tuneFlags) *cobra.Command {
	c := &cobra.Command{
		Use: "apply", Short: "Apply the profile (root; asks unless --yes)", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			o := f.options(env)
			pl, err := tune.MakePlan(o, f.profile)
			if err != nil {
				return err
			}
			if !f.asJSON {
				if err := writeTunePlan(env.Stdout, env, pl); err != nil {
					return err
				}
			}
			if !f.dryRun && !f.yes {
				if ok, err := tuneConfirm(env); err != nil || !ok {
					return err
				}
			}
			j, err := tune.Apply(o, pl)
			if err != nil {
				return err
			}
			if f.asJSON {
				return writeJSON(env.Stdout, j)
			}
			t := env.tr()
			verb := t("tune.apply.applied")
			if f.dryRun {
				verb = t("tune.apply.dry_run")
			}
			_, err = fmt.Fprint(env.Stdout, t("tune.apply.done", verb, pl.Profile, len(j.Live), len(j.Files), tune.JournalFile))
			return err
		},
	}
	c.Flags().BoolVarP(&f.yes, "yes", "y", false, "do not ask for confirmation")
	return c
}

// tuneConfirm asks on a terminal; anything else needs --yes.
func tuneConfirm(env *Env) (bool, error) {
	// A terminal, not any character device: stdin from /dev/null (cron,
	// ssh -n, CI) is one too, and it read as a silent "no" with exit 0.
	in, ok := env.Stdin.(*os.File)
	if !ok || in != os.Stdin || !term.IsTerminal(in.Fd()) {
		return false, errors.New("apply changes this host: pass --yes (no terminal to ask on)")
	}
	fmt.Fprint(env.Stdout, env.tr()("tune.apply.confirm"))
	line, err := bufio.NewReader(env.Stdin).ReadString('\n')
	if err != nil && err != io.EOF {
		return false, err
	}
	if a := strings.ToLower(strings.TrimSpace(line)); a == "y" || a == "yes" {
		return true, nil
	}
	fmt.Fprintln(env.Stdout, env.tr()("tune.apply.nothing"))
	return false, nil
}

func tuneRevertCmd(env *Env, f *tuneFlags) *cobra.Command {
	return &cobra.Command{
		Use: "revert", Short: "Restore every file and live value apply changed", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			j, err := tune.Revert(f.options(env))
			if err != nil {
				return err
			}
			if f.asJSON {
				return writeJSON(env.Stdout, j)
			}
			t := env.tr()
			verb := t("tune.revert.reverted")
			if f.dryRun {
				verb = t("tune.revert.dry_run")
			}
			_, err = fmt.Fprintln(env.Stdout, t("tune.revert.done", verb, j.Profile, len(j.Live), len(j.Files)))
			return err
		},
	}
}

func tuneStatusCmd(env *Env, f *tuneFlags) *cobra.Command {
	return &cobra.Command{
		Use: "status", Short: "Show what is applied and whether live values or files drifted (exit 1 on drift)", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			st, err := tune.Status(f.options(env))
			if err != nil {
				return err
			}
			if f.asJSON {
				err = writeJSON(env.Stdout, st)
			} else {
				err = writeTuneStatus(env.Stdout, env, st)
			}
			if err == nil && st.Drifted {
				return &ExitError{Code: 1}
			}
			return err
		},
	}
}

func tuneDropCachesCmd(env *Env, f *tuneFlags) *cobra.Command {
	var yes bool
	c := &cobra.Command{
		Use:   "drop-caches",
		Short: "One-shot: drop the page cache, dentries and inodes (never part of a profile)",
		Long: `drop-caches syncs and writes 3 to /proc/sys/vm/drop_caches. WARNING: every
process, a running training job's data loading included, then re-reads its files
from disk, which can be far slower than the memory it frees is worth. It does not
free memory a process holds. Use it for benchmarks, not as a fix.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(env.Stderr, env.tr()("tune.drop.warning"))
			if !yes && !f.dryRun {
				return errors.New("pass --yes to drop the caches")
			}
			if err := tune.DropCaches(f.options(env)); err != nil {
				return err
			}
			done := "tune.drop.done"
			if f.dryRun {
				done = "tune.drop.dry_run" // nothing was synced or written
			}
			_, err := fmt.Fprintln(env.Stdout, env.tr()(done))
			return err
		},
	}
	c.Flags().BoolVarP(&yes, "yes", "y", false, "really drop the caches")
	return c
}
