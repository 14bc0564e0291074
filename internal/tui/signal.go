package tui

import (
	"errors"
	"strconv"
	"syscall"

	"github.com/torchmem/torchmem/internal/i18n"
	"github.com/torchmem/torchmem/internal/termsafe"
)

// signalAsk is the open "send SIGTERM to pid N?" question.
type signalAsk struct {
	pid   int
	cmd   string
	sig   syscall.Signal
	start uint64 // the process's start time when asked; 0 unknown
}

// askCmdMin is the least of the command line the question shows; the
// rest of the width goes to it too, so the question and its keys fit.
const askCmdMin = 8

// openAsk asks before signalling the selected process (TERM first: it
// lets a training script save a checkpoint; KILL and INT are a key away).
func (m *model) openAsk() {
	if m.sel == 0 {
		m.f.say(m.f.t("signal.none"), true)
		return
	}
	a := &signalAsk{pid: m.sel, sig: syscall.SIGTERM}
	if rows := render(m.last, m.options()).rows; len(rows) > 0 {
		for _, r := range rows {
			if r.pid == m.sel {
				a.cmd = termsafe.Line(r.cmd)
			}
		}
	}
	if m.extra != nil {
		a.start = m.extra.Procs[m.sel].StartTicks
	}
	m.ask = a
}

// question is the open question, its command line cut to what the width
// leaves.
func (m *model) question() string {
	a := m.ask
	pid := strconv.Itoa(a.pid)
	room := m.f.width - i18n.Width(m.f.t("signal.ask", sigName(a.sig), pid, ""))
	if m.f.width <= 0 {
		room = len(a.cmd)
	}
	return m.f.t("signal.ask", sigName(a.sig), pid, i18n.Cut(a.cmd, max(askCmdMin, room)))
}

// answer takes the key pressed at the question: y sends, t/k/i change
// the signal, anything else (n, esc, enter) sends nothing.
func (m *model) answer(k string) {
	a := m.ask
	switch k {
	case "t":
		a.sig = syscall.SIGTERM
		return
	case "k":
		a.sig = syscall.SIGKILL
		return
	case "i":
		a.sig = syscall.SIGINT
		return
	case "y", "Y":
	default:
		m.ask = nil
		m.f.say(m.f.t("signal.cancel"), false)
		return
	}
	m.ask = nil
	if a.start != 0 {
		// The PID may have been reused since the question was asked.
		if st, err := m.g.fs.Stat(a.pid); err == nil && st.StartTicks != a.start {
			m.f.say(m.f.t("signal.reused", strconv.Itoa(a.pid)), true)
			return
		}
	}
	if err := m.cfg.Kill(a.pid, a.sig); err != nil {
		m.f.say(m.signalError(a.pid, err), true)
		return
	}
	m.f.say(m.f.t("signal.sent", sigName(a.sig), strconv.Itoa(a.pid)), false)
}

// signalError says why kill(2) failed in words a user acts on.
func (m *model) signalError(pid int, err error) string {
	switch {
	case errors.Is(err, syscall.EPERM):
		return m.f.t("signal.eperm", strconv.Itoa(pid))
	case errors.Is(err, syscall.ESRCH):
		return m.f.t("signal.esrch", strconv.Itoa(pid))
	}
	return m.f.t("signal.error", strconv.Itoa(pid), err.Error())
}

func sigName(s syscall.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGINT:
		return "SIGINT"
	}
	return s.String()
}
