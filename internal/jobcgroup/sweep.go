package jobcgroup

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// sweepAge is how old an empty sibling group must be before Create removes
// it: younger ones may belong to a run that made its group and has not yet
// moved its job in.
const sweepAge = time.Minute

// sweepEmpty removes the empty "run-*" groups in parent that a supervisor
// killed with SIGKILL left behind once their job ended. rmdir of a cgroup
// that still has processes or children fails, which is left as it is.
func sweepEmpty(parent string, now time.Time) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "run-") {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		info, err := e.Info()
		if err != nil || now.Sub(info.ModTime()) < sweepAge {
			continue
		}
		// (A missing cgroup.procs only happens in fixture trees: reads as empty.)
		b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		if err != nil && !os.IsNotExist(err) || len(strings.TrimSpace(string(b))) > 0 {
			continue
		}
		_ = os.Remove(dir)
	}
}
