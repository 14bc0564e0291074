package supervisor

import (
	"context"
	"os"
	"syscall"
	"time"

	"github.com/torchmem/torchmem/internal/allocconf"
	"github.com/torchmem/torchmem/internal/store"
)

// finish runs after the main process was reaped: it takes a last sample,
// kills what the job left behind, collects the evidence and explains it.
func (s *sup) finish(ctx context.Context) *Result {
	end := s.now()
	code, sig := exitStatus(s.job.cmd.ProcessState)
	s.drainHook(150 * time.Millisecond)
	s.sampleNow(end)
	if s.cg != nil {
		// The kernel's own high-water mark catches peaks between samples.
		if p := s.cg.Peak(); p != nil && *p > 0 {
			s.peaks.Raise(store.PeakCgroupUsage, *p)
		}
	}
	jobPIDs := s.seenPIDs()
	orphans := s.killOrphans()
	e := evidence{code: code, sig: sig, mainPID: s.job.pid, dur: end.Sub(s.began), ooms: s.hk.ooms,
		excs: s.hk.exceptions, hello: s.hk.hello, cudaPIDs: s.hk.cudaPIDs, jobPIDs: jobPIDs, allocPeaks: s.peaks,
		interrupts: s.interrupts, growth: s.growth.leak(), copyOnRead: s.growth.workers.detect(s.hk.hello)}
	e.timeToOOM, e.policyStop = s.timeToOOM(end), s.policyStop
	_, e.allocConf = allocconf.FromEnv(func(k string) string { return envValue(s.cfg.Env, k) })
	if s.cg != nil {
		if ev, err := s.cg.Events(); err == nil {
			e.events = &ev
		}
		e.limit, e.cgroupRel = s.cg.Limit(), s.cg.Path()
	}
	e.kernel = s.kernelLines(ctx, e)
	sum := classify(e)
	sum.localize(e, s.cfg.Lang)
	sum.Peaks, sum.OrphansKilled, sum.Hooked = s.peaks, orphans, len(s.hk.hello)
	sum.PerStep = s.hk.stepPeaks()
	if s.hk.step >= 0 {
		st := s.hk.step
		sum.LastStep, sum.Steps = &st, st
	}
	s.event(s.now(), "exit", "supervisor", s.job.pid, sum.Verdict, map[string]any{"exit_code": code, "cause": sum.Cause})
	s.cleanup()
	s.status.done()
	return &Result{ExitCode: code, Summary: sum}
}

// drainHook reads the messages hooked processes sent just before exiting
// (the uncaught exception, bye) until idle for d.
func (s *sup) drainHook(d time.Duration) {
	if s.srv == nil {
		return
	}
	for {
		select {
		case m := <-s.srv.Messages():
			s.onHook(m)
		case <-time.After(d):
			return
		}
	}
}

// seenPIDs: every PID the job had that we know of (for matching kernel lines).
func (s *sup) seenPIDs() map[int]bool {
	out := map[int]bool{s.job.pid: true}
	for p := range s.hk.hello {
		out[p] = true
	}
	for p := range s.everPIDs { // s.last.pids are among them
		out[p] = true
	}
	return out
}

// killOrphans kills what is left of the job after its main process exited
// (DataLoader workers, background helpers) so none keeps GPU memory, and
// returns how many there were.
func (s *sup) killOrphans() int {
	if s.cg != nil {
		pids, _ := s.cg.Procs()
		if len(pids) > 0 {
			if err := s.cg.Kill(); err != nil {
				s.notice(tr(s.lang())("notice.kill_leftover_failed", err.Error()))
			}
		}
		return len(pids)
	}
	if s.cfg.Interactive {
		return s.killLeftInOurGroup()
	}
	if syscall.Kill(-s.job.pid, 0) == nil {
		_ = syscall.Kill(-s.job.pid, syscall.SIGKILL)
		return 1 // at least one; without a cgroup we cannot count them exactly
	}
	return 0
}

// killLeftInOurGroup kills, without a cgroup, the job's processes that
// are still alive after an interactive run: they share torchmem's process
// group, which must not be signalled as a whole. Only PIDs seen in the job
// that are still in that group count (a reused PID is elsewhere).
func (s *sup) killLeftInOurGroup() int {
	n, self, grp := 0, os.Getpid(), syscall.Getpgrp()
	for p := range s.everPIDs {
		if g, err := syscall.Getpgid(p); p != self && p != s.job.pid && err == nil && g == grp {
			if syscall.Kill(p, syscall.SIGKILL) == nil {
				n++
			}
		}
	}
	return n
}

func (s *sup) kernelLines(ctx context.Context, e evidence) []string {
	if s.cfg.KernelLog == nil {
		return nil
	}
	oomSuspected := e.sig != nil && *e.sig == int(syscall.SIGKILL) ||
		e.events != nil && e.events.OOMKill != nil && *e.events.OOMKill > 0
	if !oomSuspected && !s.workerDeathSuspected() {
		return nil
	}
	// The OOM report can trail the kill by a few ms.
	time.Sleep(50 * time.Millisecond)
	c, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	lines, err := s.cfg.KernelLog(c, s.began.Add(-time.Second))
	if err != nil {
		s.notice(tr(s.lang())("notice.kernel_log_unread", err.Error()))
	}
	return lines
}

func (s *sup) workerDeathSuspected() bool {
	for _, x := range s.hk.exceptions {
		if containsAny(x.Text, "DataLoader worker", "killed by signal") {
			return true
		}
	}
	return false
}

// cleanup closes the hook server and removes the cgroup and hook dir.
func (s *sup) cleanup() {
	s.stopReaper()
	if s.srv != nil {
		_ = s.srv.Close()
	}
	if s.cg != nil {
		if err := s.cg.Delete(); err != nil {
			s.notice(tr(s.lang())("notice.cgroup_not_removed", err.Error()))
		}
	}
	if s.cfg.HookDir != "" && !s.cfg.KeepHookDir {
		_ = os.RemoveAll(s.cfg.HookDir)
	}
	if s.cfg.SnapshotDir != "" {
		_ = os.Remove(s.cfg.SnapshotDir) // only if no snapshot was dumped
	}
}
