package supervisor

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/torchmem/torchmem/internal/procfs"
)

// The reaper is a small torchmem process beside the supervisor, in its own
// process group and outside the job's cgroup, that cleans up when the
// supervisor dies without doing it (SIGKILL, an OOM kill of torchmem
// itself, a crash): the job's main process dies with the supervisor
// (parent-death signal), but its children, the job's cgroup and the run
// directory would otherwise wait for the next run's sweep. The reaper polls
// the owner record; when the owner is gone it runs that same sweep at
// once. A normal end removes the record first, and the reaper exits.

// reapPoll is how often the reaper checks its supervisor: a few reads of
// /proc a second cost nothing, and cleanup follows a death within it.
const reapPoll = 250 * time.Millisecond

// startReaper starts Config.ReaperArgv with the owner record's path. No
// record (no run directory, --keep-job-on-exit), no reaper.
func (s *sup) startReaper() {
	if len(s.cfg.ReaperArgv) == 0 || s.cfg.HookDir == "" || s.cfg.KeepJobOnExit {
		return
	}
	path := filepath.Join(s.cfg.HookDir, ownerFile)
	if _, err := os.Stat(path); err != nil {
		return
	}
	args := append(append([]string(nil), s.cfg.ReaperArgv[1:]...), path)
	cmd := exec.Command(s.cfg.ReaperArgv[0], args...)
	// Its own process group: a signal to torchmem's group (a terminal's
	// Ctrl-C, `timeout`, a killed session) must not take the reaper too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		s.notice(tr(s.lang())("notice.no_reaper", err.Error()))
		return
	}
	s.reaper = cmd
	go func() { _ = cmd.Wait() }()
}

// stopReaper ends the reaper at a normal end: the owner record goes
// first, so a reaper that outlives the kill finds nothing to do.
func (s *sup) stopReaper() {
	if s.cfg.HookDir != "" {
		_ = os.Remove(filepath.Join(s.cfg.HookDir, ownerFile))
	}
	if s.reaper != nil && s.reaper.Process != nil {
		_ = s.reaper.Process.Kill()
	}
}

// Reap waits while the supervisor that owns ownerPath runs, then cleans
// up after it as a later run's sweep would, and returns the sweep's line.
// It returns "" at once when the record is gone or unreadable (the
// supervisor ended normally), and when ctx ends.
func Reap(ctx context.Context, procRoot, ownerPath string) string {
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return ""
	}
	t := time.NewTicker(reapPoll)
	defer t.Stop()
	for {
		b, err := os.ReadFile(ownerPath)
		var o owner
		if err != nil || json.Unmarshal(b, &o) != nil || o.PID <= 0 {
			return ""
		}
		if !ownerAlive(fs, o) {
			return sweepOne(fs, ownerPath)
		}
		select {
		case <-ctx.Done():
			return ""
		case <-t.C:
		}
	}
}
