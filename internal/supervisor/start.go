package supervisor

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"

	"github.com/torchmem/torchmem/internal/jobcgroup"
)

// job is the started command.
type job struct {
	cmd  *exec.Cmd
	pid  int
	done chan struct{} // closed when the main process was reaped
}

// setupCgroup makes the job's group, or says in one line why the run is
// monitor-only.
func (s *sup) setupCgroup() {
	if !s.cfg.Cgroup {
		s.notice(tr(s.lang())("notice.monitor_only_flag"))
		return
	}
	cg, notes, err := jobcgroup.Create(jobcgroup.Options{ProcRoot: s.cfg.ProcRoot, Name: s.cfg.CgroupName, Limits: s.cfg.Limits})
	if err != nil {
		why := err.Error()
		if os.Geteuid() != 0 {
			why = tr(s.lang())("notice.not_root", err.Error())
		}
		s.notice(tr(s.lang())("notice.monitor_only_failed", why))
		return
	}
	for _, n := range notes {
		s.notice(n)
	}
	s.cg = cg
}

// start launches the trampoline in its own process group, moves it into
// the cgroup, sets oom_score_adj (inherited by everything it forks), then
// sends the plan, which lets it exec the job.
func (s *sup) start(env []string, p plan) (*job, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("pipe: %w", err)
	}
	defer r.Close()
	args := append(append([]string{}, s.cfg.SelfArgs...), TrampolineArg)
	cmd := exec.Command(s.cfg.Self, args...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s.cfg.Stdin, s.cfg.Stdout, s.cfg.Stderr
	cmd.ExtraFiles = []*os.File{r}
	// Own process group so signals reach the whole job. Interactive: the
	// job stays in torchmem's group, the terminal's foreground, as the
	// commands of a shell script do: it reads the terminal (pdb, input())
	// and gets Ctrl-C straight from it, and torchmem sees every Ctrl-C
	// too, so the second one can escalate (a job in a foreground group of
	// its own took every Ctrl-C and torchmem never saw one).
	// Pdeathsig: the job's main process dies with torchmem unless
	// --keep-job-on-exit (the rest of its cgroup: SweepStale, next run).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: !s.cfg.Interactive}
	if !s.cfg.KeepJobOnExit {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	done, err := launch(cmd)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("start %s: %w", s.cfg.Self, err)
	}
	j := &job{cmd: cmd, pid: cmd.Process.Pid, done: done}
	abort := func(err error) (*job, error) {
		w.Close() // the trampoline sees no plan and exits 126
		_ = cmd.Process.Kill()
		<-done
		return nil, err
	}
	if s.cg != nil {
		if err := s.cg.Add(j.pid); err != nil {
			return abort(fmt.Errorf("add job to cgroup: %w", err))
		}
	}
	if s.cfg.OOMScoreAdj != nil {
		path := filepath.Join(s.cfg.ProcRoot, strconv.Itoa(j.pid), "oom_score_adj")
		if err := os.WriteFile(path, []byte(strconv.Itoa(*s.cfg.OOMScoreAdj)), 0); err != nil {
			if errors.Is(err, os.ErrPermission) && *s.cfg.OOMScoreAdj < 0 {
				return abort(fmt.Errorf("--oom-score-adj %d: lowering needs root (CAP_SYS_RESOURCE): %w", *s.cfg.OOMScoreAdj, err))
			}
			return abort(fmt.Errorf("write %s: %w", path, err))
		}
	}
	b, _ := json.Marshal(p)
	_, err = w.Write(b)
	w.Close()
	if err != nil {
		return abort(fmt.Errorf("send plan to trampoline: %w", err))
	}
	return j, nil
}

// launch starts cmd and reaps it on one goroutine locked to its OS thread
// for the whole life of the job: the kernel sends the parent-death signal
// when the thread that forked the child exits, not the process, and Go may
// end an idle thread at any time (golang/go#27505). done is closed once
// cmd.Wait returned; the goroutine then exits still locked, which ends the
// thread, after the job is gone.
func launch(cmd *exec.Cmd) (done chan struct{}, err error) {
	done = make(chan struct{})
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked, on purpose (above)
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
		close(done)
	}()
	return done, <-started
}

// exitStatus is the shell's: the code, or 128+signal.
func exitStatus(ps *os.ProcessState) (code int, sig *int) {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok {
		return ps.ExitCode(), nil
	}
	if ws.Signaled() {
		n := int(ws.Signal())
		return 128 + n, &n
	}
	return ws.ExitStatus(), nil
}
