package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/torchmem/torchmem/internal/jobcgroup"
)

// runScopeEnv marks a torchmem already re-run inside a systemd user scope.
const runScopeEnv = "TORCHMEM_SYSTEMD_SCOPE"

// runMaybeScope handles "not root, no writable cgroup" on a systemd host
// with cgroup v2: it replaces this process with
//
//	systemd-run --user --scope -p Delegate=yes -- torchmem run ...
//
// so torchmem starts again in a delegated scope it may create the job's
// group in (jobcgroup moves torchmem into a leaf there). It returns only
// when that does not apply or the exec failed.
func runMaybeScope(env *Env, f *runFlags) {
	if os.Geteuid() == 0 || f.noCgroup || os.Getenv(runScopeEnv) != "" {
		return
	}
	run, err := exec.LookPath("systemd-run")
	rt := os.Getenv("XDG_RUNTIME_DIR")
	if err != nil || rt == "" {
		return
	}
	if _, err := os.Stat(filepath.Join(rt, "systemd", "private")); err != nil {
		return // no user manager to ask for a scope
	}
	if _, err := os.Stat(filepath.Join(env.SysRoot, "fs", "cgroup", "cgroup.controllers")); err != nil {
		return // v1: user scopes get no memory controller
	}
	g, _, err := jobcgroup.Create(jobcgroup.Options{ProcRoot: env.ProcRoot, Name: fmt.Sprintf("probe-%d", os.Getpid())})
	if err == nil {
		_ = g.Delete()
		return
	}
	if !errors.Is(err, jobcgroup.ErrNoCgroup) {
		return
	}
	self, err := os.Executable()
	if err != nil {
		return
	}
	fmt.Fprintf(env.Stderr, "torchmem: no writable memory cgroup for uid %d; re-running in a delegated systemd user scope (systemd-run --user --scope)\n", os.Geteuid())
	argv := append([]string{run, "--user", "--scope", "--quiet", "--collect", "-p", "Delegate=yes", "--", self}, os.Args[1:]...)
	err = syscall.Exec(run, argv, append(os.Environ(), runScopeEnv+"=1"))
	fmt.Fprintf(env.Stderr, "torchmem: systemd-run: %v; continuing without a scope\n", err)
}
