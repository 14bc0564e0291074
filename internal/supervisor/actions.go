package supervisor

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/torchmem/torchmem/internal/gpu"
	"github.com/torchmem/torchmem/internal/hook"
	"github.com/torchmem/torchmem/internal/oomexplain"
	"github.com/torchmem/torchmem/internal/policy"
	"github.com/torchmem/torchmem/internal/termsafe"
)

// onSignal forwards a signal to the job's process group. The first Ctrl-C
// is forwarded as is (PyTorch scripts often save a checkpoint on
// KeyboardInterrupt); the second sends SIGTERM and SIGKILLs the cgroup
// after the grace period; the third kills at once.
func (s *sup) onSignal(sig syscall.Signal) {
	now := s.now()
	if s.cfg.Interactive && sig != syscall.SIGINT && sig != syscall.SIGTERM {
		return // Ctrl-\ or a hang-up: the terminal signalled the job itself
	}
	if sig == syscall.SIGTERM && !s.cfg.KeepJobOnExit {
		s.onTerm(now)
		return
	}
	if sig != syscall.SIGINT {
		s.signalJob(sig)
		s.event(now, "signal", "supervisor", s.job.pid, "forwarded "+sigName(sig)+" to the job", nil)
		return
	}
	s.interrupts++
	switch s.interrupts {
	case 1:
		t := tr(s.lang())
		what := t("notice.got_sigint")
		if !s.jobGotSIGINT() { // a Ctrl-C: the terminal sent it to the job too
			s.signalJob(syscall.SIGINT)
			what = t("notice.forwarded_sigint")
		}
		s.notice(t("notice.ctrl_c_once", what, s.cfg.Grace.String()))
	case 2:
		s.signalJob(syscall.SIGTERM)
		s.killAt = now.Add(s.cfg.Grace)
		s.notice(tr(s.lang())("notice.ctrl_c_twice", s.cfg.Grace.String()))
	default:
		s.notice(tr(s.lang())("notice.kill_now"))
		s.killJob()
	}
	s.event(now, "signal", "supervisor", s.job.pid, fmt.Sprintf("Ctrl-C #%d", s.interrupts), nil)
}

// onTerm: torchmem is being stopped (kill, a scheduler, timeout), so the
// job is too, as systemd's KillMode=control-group does: SIGTERM now, the
// cgroup SIGKILLed after the grace period, at once on a second SIGTERM.
func (s *sup) onTerm(now time.Time) {
	s.terms++
	if s.terms > 1 {
		s.notice(tr(s.lang())("notice.sigterm_twice"))
		s.killJob()
	} else {
		s.signalJob(syscall.SIGTERM)
		if s.killAt.IsZero() || s.killAt.After(now.Add(s.cfg.Grace)) {
			s.killAt = now.Add(s.cfg.Grace)
		}
		s.notice(tr(s.lang())("notice.sigterm_once", s.cfg.Grace.String()))
	}
	s.event(now, "signal", "supervisor", s.job.pid, fmt.Sprintf("SIGTERM #%d to torchmem", s.terms), nil)
}

func (s *sup) signalJob(sig syscall.Signal) {
	if !s.cfg.Interactive {
		// Negative pid: the whole process group the trampoline made.
		_ = syscall.Kill(-s.job.pid, sig)
		return
	}
	// Interactive: the job shares torchmem's group; signal its processes.
	self := os.Getpid()
	for _, p := range s.sm.jobPIDs() {
		if p != self {
			_ = syscall.Kill(p, sig)
		}
	}
}

func (s *sup) maybeKill(now time.Time) {
	if !s.killAt.IsZero() && !now.Before(s.killAt) {
		s.notice(tr(s.lang())("notice.grace_over"))
		s.killJob()
		s.killAt = time.Time{}
	}
}

// killJob SIGKILLs everything of the job: its cgroup when it has one, else
// its process group.
func (s *sup) killJob() {
	if s.cg != nil {
		if err := s.cg.Kill(); err == nil {
			return
		}
	}
	s.signalJob(syscall.SIGKILL)
}

func (s *sup) applyPolicy(now time.Time, metrics map[string]float64) {
	prev := s.pst // Evaluate returns a new State and leaves prev as it was
	if prev.Start.IsZero() {
		prev.Start = s.began // for rules with after:
	}
	var ds []policy.Decision
	s.pst, ds = policy.Evaluate(s.cfg.Rules, prev, now, metrics)
	for _, d := range ds {
		if !s.act(now, d) {
			s.pst.Last[d.Index] = time.Time{}
			if d.Index < len(prev.Last) {
				s.pst.Last[d.Index] = prev.Last[d.Index]
			}
		}
	}
}

// act carries out one decision; false when there was nobody to carry it
// out on (no hooked process yet), so the rate limit is not spent.
func (s *sup) act(now time.Time, d policy.Decision) bool {
	msg := d.Reason() // stored with the event: history is English
	t := tr(s.lang())
	value, threshold := d.Shown()
	say := t("notice.condition", d.Rule.Name, d.Rule.Metric, value, threshold) // msg on the terminal
	switch d.Rule.Action {
	case policy.Warn:
		s.notice(t("notice.warning", say))
	case policy.Cleanup:
		if s.srv == nil {
			msg += "; no hook, nothing to clean"
			break
		}
		pids := s.srv.Broadcast(hook.Command{Type: hook.CmdCleanup})
		if len(pids) == 0 {
			return false
		}
		msg += fmt.Sprintf("; cleanup sent to %d process(es)", len(pids))
	case policy.Snapshot:
		if s.srv != nil && len(s.hk.last)+len(s.hk.hello) == 0 {
			return false
		}
		if s.srv != nil && len(s.hk.last) > 0 && len(s.hk.cudaPIDs) == 0 {
			// A memory snapshot is the CUDA caching allocator's history:
			// on a CPU-only job the hook could only fail, later, in the
			// event list. Say so at once instead of "requested".
			msg += "; no snapshot: no process of the job uses CUDA (memory snapshots record the CUDA caching allocator)"
			s.notice(t("notice.snapshot", say+t("notice.snapshot_no_cuda")))
			break
		}
		en, local := s.snapshot(now)
		msg += en
		s.notice(t("notice.snapshot", say+local))
	case policy.Signal:
		sig, ok := parseSignal(d.Rule.Signal)
		if !ok {
			msg += "; unknown signal " + d.Rule.Signal
			break
		}
		s.signalJob(sig)
		msg += "; sent " + sigName(sig)
		if terminating(sig) {
			s.notePolicyStop(d, sig)
		}
	case policy.Stop:
		s.signalJob(syscall.SIGTERM)
		s.notePolicyStop(d, syscall.SIGTERM)
		s.killAt = now.Add(s.cfg.Grace)
		s.notice(t("notice.stopping", say))
	case policy.Exec, policy.Notify:
		m, ok := s.external(now, d)
		if !ok {
			return false
		}
		msg += m
	}
	if d.Rule.Metric == policy.CgroupTimeToOOM || d.Rule.Metric == policy.GPUTimeToOOM {
		s.noteFired(d)
	}
	// sample_ns: when the sample (or the cgroup event) that triggered it was
	// taken; at_ns: when the action was done (for reaction benchmarks).
	at := s.now()
	// rule_name, metric, value_text and threshold_text are the message's
	// parts, so that a reader in another language can word it (show).
	data := map[string]any{"rule": d.Rule.String(), "value": d.Value, "sample_ns": now.UnixNano(), "at_ns": at.UnixNano(),
		"rule_name": d.Rule.Name, "metric": d.Rule.Metric, "value_text": value, "threshold_text": threshold}
	s.event(at, d.Rule.Action, "policy", 0, msg, data)
	return true
}

// terminating: the signals whose default action ends a process, which a
// signal rule sends to stop a job (SIGUSR1 and friends are requests).
func terminating(sig syscall.Signal) bool {
	switch sig {
	case syscall.SIGTERM, syscall.SIGKILL, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGHUP:
		return true
	}
	return false
}

// notePolicyStop keeps the first rule that stopped the job.
func (s *sup) notePolicyStop(d policy.Decision, sig syscall.Signal) {
	if s.policyStop == nil {
		value, threshold := d.Shown()
		s.policyStop = &oomexplain.PolicyStop{Rule: d.Rule.Name, Reason: d.Condition(), Signal: sigName(sig),
			Metric: d.Rule.Metric, Value: value, Threshold: threshold}
	}
}

// snapshot asks the hooked processes for a memory snapshot; en is what the
// event records, local what the notice says.
func (s *sup) snapshot(now time.Time) (en, local string) {
	t := tr(s.lang())
	if s.srv == nil {
		return "; no hook, no snapshot", t("notice.snapshot_no_hook")
	}
	// The hook puts its own pid for {pid}; Broadcast skips DataLoader workers.
	path := filepath.Join(s.snapshotDir(), fmt.Sprintf("policy-{pid}-%d.pickle", now.Unix()))
	n := len(s.srv.Broadcast(hook.Command{Type: hook.CmdSnapshot, Path: path}))
	return fmt.Sprintf("; snapshot requested from %d process(es) into %s", n, s.snapshotDir()),
		t("notice.snapshot_requested", n, s.snapshotDir())
}

var signalNames = func() map[string]syscall.Signal {
	m := make(map[string]syscall.Signal, len(policy.Signals))
	for _, n := range policy.Signals {
		if sig := unix.SignalNum(n); sig != 0 { // 0: not a signal of this OS
			m[n] = sig
		}
	}
	return m
}()

func parseSignal(s string) (syscall.Signal, bool) {
	sig, ok := signalNames[policy.NormalSignal(s)]
	return sig, ok
}

func sigName(sig syscall.Signal) string {
	for n, v := range signalNames {
		if v == sig {
			return n
		}
	}
	return fmt.Sprintf("signal %d", int(sig))
}

// notice prints one line; it may hold the job's text (hook notices,
// errors naming its files), so it is escaped for the terminal.
func (s *sup) notice(line string) {
	s.status.clear()
	fmt.Fprintln(s.cfg.Notices, tr(s.lang())("status.prefix")+termsafe.Line(line))
}

func devicesOf(b gpu.Backend) []gpu.Device {
	if b == nil {
		return nil
	}
	d, _ := b.Devices()
	return d
}

func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}
