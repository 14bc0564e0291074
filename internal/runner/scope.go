package runner

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/torchmem/torchmem/internal/jobcgroup"
)

// scopeEnv marks a torchmem already re-run inside a systemd user scope.
const scopeEnv = "TORCHMEM_SYSTEMD_SCOPE"

// maybeScope handles "not root, no writable cgroup" on a systemd host
// with cgroup v2: it replaces this process with
//
//	systemd-run --user --scope -p Delegate=yes -- torchmem ScopeArgs...
//
// so torchmem starts again in a delegated scope it may create the job's
// group in (jobcgroup moves torchmem into a leaf there). It returns only
// when that does not apply or the exec failed.
func (c *Config) maybeScope() {
	if c.ScopeArgs == nil || os.Geteuid() == 0 || c.NoCgroup || os.Getenv(scopeEnv) != "" {
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
	if _, err := os.Stat(filepath.Join(c.SysRoot, "fs", "cgroup", "cgroup.controllers")); err != nil {
		return // v1: user scopes get no memory controller
	}
	g, _, err := jobcgroup.Create(jobcgroup.Options{ProcRoot: c.ProcRoot, Name: fmt.Sprintf("probe-%d", os.Getpid())})
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
	fmt.Fprintln(c.Notices, say(c.Lang, "scope", os.Geteuid()))
	argv := append([]string{run, "--user", "--scope", "--quiet", "--collect", "-p", "Delegate=yes", "--", self}, c.ScopeArgs...)
	err = syscall.Exec(run, argv, append(os.Environ(), scopeEnv+"=1"))
	fmt.Fprintln(c.Notices, say(c.Lang, "scope_failed", fmt.Sprint(err)))
}
