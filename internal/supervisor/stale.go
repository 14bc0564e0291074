package supervisor

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/torchmem/torchmem/internal/jobcgroup"
	"github.com/torchmem/torchmem/internal/procfs"
)

// ownerFile, in the run directory, says which supervisor owns the run and
// where its job's cgroup is, so that a later run can clean up after a
// supervisor that died without doing it (SIGKILL, OOM, a crash):
//
//	{"pid":4242,"start_ticks":8374612,"cgroup":{"version":1,"mount":"/sys/fs/cgroup/memory","rel":"/torchmem/run-abc"}}
const ownerFile = "owner.json"

// owner is the content of ownerFile.
type owner struct {
	PID    int               `json:"pid"`
	Start  uint64            `json:"start_ticks"`
	Cgroup *jobcgroup.Handle `json:"cgroup,omitempty"`
	// KeepDir: --keep-hook-dir; a sweep removes only the owner file.
	KeepDir bool `json:"keep_dir,omitempty"`
}

// writeOwner records this supervisor as the run directory's owner. With
// KeepJobOnExit there is none: the job may outlive us on purpose and no
// sweep may touch it.
func (s *sup) writeOwner() {
	if s.cfg.HookDir == "" || s.cfg.KeepJobOnExit {
		return
	}
	fs, err := procfs.NewFS(s.cfg.ProcRoot)
	if err != nil {
		return
	}
	st, err := fs.Stat(os.Getpid())
	if err != nil {
		return
	}
	o := owner{PID: st.PID, Start: st.StartTicks, KeepDir: s.cfg.KeepHookDir}
	if s.cg != nil {
		h := s.cg.Handle()
		o.Cgroup = &h
	}
	b, _ := json.Marshal(o)
	if err := os.WriteFile(filepath.Join(s.cfg.HookDir, ownerFile), b, 0o600); err != nil {
		s.notice(tr(s.lang())("notice.no_owner_record", err.Error()))
	}
}

// SweepStale cleans up after supervisors that died: for every
// dir/torchmem-*/owner.json whose supervisor is gone (no such process, a
// zombie, or another process under that PID) it SIGKILLs what is left in
// the job's cgroup, removes the cgroup and the run directory. It returns
// one line per run it cleaned up.
func SweepStale(procRoot, dir string) []string {
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return nil
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "torchmem-*", ownerFile))
	var out []string
	for _, p := range paths {
		if line := sweepOne(fs, p); line != "" {
			out = append(out, line)
		}
	}
	return out
}

func sweepOne(fs procfs.FS, path string) string {
	b, err := os.ReadFile(path)
	var o owner
	if err != nil || json.Unmarshal(b, &o) != nil || o.PID <= 0 || ownerAlive(fs, o) {
		return ""
	}
	what := fmt.Sprintf("cleaned up after supervisor %d, which died: run directory %s", o.PID, filepath.Dir(path))
	if o.Cgroup != nil {
		g := jobcgroup.FromHandle(*o.Cgroup)
		if pids, err := g.Procs(); err == nil {
			if len(pids) > 0 {
				_ = g.Kill()
			}
			what += fmt.Sprintf(", cgroup %s (%d process(es) killed)", g.Path(), len(pids))
		}
		_ = g.Delete()
	}
	if o.KeepDir {
		_ = os.Remove(path)
	} else {
		_ = os.RemoveAll(filepath.Dir(path))
	}
	return what
}

// ownerAlive: the same process (PID and start time) still runs.
func ownerAlive(fs procfs.FS, o owner) bool {
	st, err := fs.Stat(o.PID)
	if err != nil {
		return !procfs.IsVanished(err)
	}
	return !st.Exited() && st.StartTicks == o.Start
}
