// Package cli holds one file per torchmem subcommand. Each file registers its
// command constructor with register() from an init function, so subcommands
// can be added without touching this file.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"

	"github.com/spf13/cobra"
)

// Version is set at link time with -ldflags "-X ...cli.Version=v1.2.3"
// (make build, the packages); a plain `go build` or `go install` leaves it
// "dev" and versionString asks the module's build info instead.
var Version = "dev"

// versionString is what --version prints: the linked version; else the
// module version `go install module@v1.2.3` records; else the commit a
// `go build` in a checkout records (with "-dirty" for uncommitted
// changes) and its time; "dev" only when the binary knows none of them.
func versionString(info *debug.BuildInfo, ok bool) string {
	if Version != "dev" || !ok || info == nil {
		return Version
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, when string
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return Version
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	out := "dev-" + rev
	if dirty {
		out += "-dirty"
	}
	if when != "" {
		out += " (" + when + ")"
	}
	return out
}

// Env is what every command gets: its streams and the roots of the host
// files it reads, injected so tests can point them at fixture trees.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// ProcRoot, SysRoot: normally /proc and /sys; TORCHMEM_PROC_ROOT and
	// TORCHMEM_SYS_ROOT override them (used by golden tests).
	ProcRoot string
	SysRoot  string
	// Root is the file-system root for files under /etc, /dev/shm, /var.
	Root string
	// Lang is the language of explanations, "zh" or "en" (""): the
	// locale's (localeLang), or --lang.
	Lang string
	// Self is this program's path when it runs as the torchmem binary
	// (Main), so `run` can start its reaper (`torchmem __reap`); empty in
	// tests that call Run in-process, which must never re-execute the
	// test binary.
	Self string
}

// ExitError carries a specific exit status out of a command (doctor's 1/2,
// a supervised job's own status) without printing anything more.
type ExitError struct {
	Code int
	Err  error // may be nil: the command already said what happened
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

type constructor func(env *Env) *cobra.Command

var registry = map[string]constructor{}

// register adds a subcommand; name only orders and de-duplicates.
func register(name string, c constructor) {
	if _, dup := registry[name]; dup {
		panic("cli: duplicate command " + name)
	}
	registry[name] = c
}

// DefaultEnv is the Env of a real invocation.
func DefaultEnv() *Env {
	return &Env{
		Stdin:    os.Stdin,
		Stdout:   os.Stdout,
		Stderr:   os.Stderr,
		ProcRoot: envOr("TORCHMEM_PROC_ROOT", "/proc"),
		SysRoot:  envOr("TORCHMEM_SYS_ROOT", "/sys"),
		Root:     envOr("TORCHMEM_ROOT", "/"),
		Lang:     localeLang(os.Getenv),
	}
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// NewRoot builds the command tree for env.
func NewRoot(env *Env) *cobra.Command {
	root := &cobra.Command{
		Use:           "torchmem",
		Short:         "Keep PyTorch jobs out of host and GPU memory trouble, and explain what happened when they were not",
		Version:       versionString(debug.ReadBuildInfo()),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// --version has no -v: -v is --verbose wherever a command has one
	// (doctor), so it must not mean something else at the top level.
	root.Flags().Bool("version", false, "print torchmem's version")
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	root.PersistentFlags().Var(&langFlag{env: env}, "lang",
		"language of the human output of oom, run's post-mortem and estimate, zh or en (default: from LC_ALL, LC_MESSAGES or LANG); --json output is always English")
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		root.AddCommand(registry[n](env))
	}
	localizedHelp(root, env)
	return root
}

// Run executes args against env and returns the process exit status.
func Run(env *Env, args []string) int {
	root := NewRoot(env)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			fmt.Fprintf(env.Stderr, "torchmem: %v\n", ee.Err)
		}
		return ee.Code
	}
	fmt.Fprintf(env.Stderr, "torchmem: %v\n", err)
	return 1
}

// Main is the entry point used by cmd/torchmem.
func Main(args []string) int {
	env := DefaultEnv()
	if exe, err := os.Executable(); err == nil {
		env.Self = exe
	}
	return Run(env, args)
}
