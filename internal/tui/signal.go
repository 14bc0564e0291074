package tui

import (
	"errors"
	"strconv"
	"syscall"

	"github.com/torchmem/torchmem/internal/i18n"
	"github.com/torchmem/torchmem/internal/termsafe"
)

// picker is the selection of a process row and the signal question on
// it, one implementation for both live views: top's table of every job
// and run --tui's of the supervised job. Its views render the rows
// (procRow) and pass them in; it says what happened in f's status line.
type picker struct {
	f      *frame
	sel    int // the selected process's PID; 0 for none
	selIdx int // its row, to stay near when it exits
	ask    *signalAsk
	// kill sends a signal (syscall.Kill; tests record instead).
	kill func(pid int, sig syscall.Signal) error
	// startOf reads a process's start time (/proc/<pid>/stat), to tell
	// a reused PID before signalling it.
	startOf func(pid int) (uint64, error)
}

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

// pick selects the row d rows down (up when negative) of rows; the first
// move selects the first row.
func (p *picker) pick(rows []procRow, d int) {
	if len(rows) == 0 {
		p.sel = 0
		return
	}
	i := p.selectedRow(rows)
	if i < 0 {
		i = 0
	} else {
		i = min(max(0, i+d), len(rows)-1)
	}
	p.sel, p.selIdx = rows[i].pid, i
}

// selectedRow is the index of the selected process in rows, or of the row
// now where it was when it has exited; -1 when nothing is selected.
func (p *picker) selectedRow(rows []procRow) int {
	if p.sel == 0 {
		return -1
	}
	for i, r := range rows {
		if r.pid == p.sel {
			return i
		}
	}
	return min(p.selIdx, len(rows)-1)
}

// cursor is the selected row's index in rows (-1: none). When the
// selected process has exited, the row now at its place is selected and
// moved reports it: the view renders again to mark it.
func (p *picker) cursor(rows []procRow) (i int, moved bool) {
	i = p.selectedRow(rows)
	if i >= 0 && rows[i].pid != p.sel {
		p.sel = rows[i].pid
		return i, true
	}
	return i, false
}

// openAsk asks before signalling the selected process of rows (TERM
// first: it lets a training script save a checkpoint; KILL and INT are a
// key away). start is the process's start time as sampled, 0 unknown:
// then it is read now.
func (p *picker) openAsk(rows []procRow, start uint64) {
	if p.sel == 0 {
		p.f.say(p.f.t("signal.none"), true)
		return
	}
	a := &signalAsk{pid: p.sel, sig: syscall.SIGTERM, start: start}
	for _, r := range rows {
		if r.pid == p.sel {
			a.cmd = termsafe.Line(r.cmd)
		}
	}
	if a.start == 0 && p.startOf != nil {
		a.start, _ = p.startOf(p.sel)
	}
	p.ask = a
}

// question is the open question, its command line cut to what the width
// leaves.
func (p *picker) question() string {
	a, f := p.ask, p.f
	pid := strconv.Itoa(a.pid)
	room := f.width - i18n.Width(f.t("signal.ask", sigName(a.sig), pid, ""))
	if f.width <= 0 {
		room = len(a.cmd)
	}
	return f.t("signal.ask", sigName(a.sig), pid, i18n.Cut(a.cmd, max(askCmdMin, room)))
}

// answer takes the key pressed at the question: y sends, t/k/i change
// the signal, anything else (n, esc, enter) sends nothing.
func (p *picker) answer(k string) {
	a, f := p.ask, p.f
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
		p.ask = nil
		f.say(f.t("signal.cancel"), false)
		return
	}
	p.ask = nil
	if a.start != 0 && p.startOf != nil {
		// The PID may have been reused since the question was asked.
		if st, err := p.startOf(a.pid); err == nil && st != a.start {
			f.say(f.t("signal.reused", strconv.Itoa(a.pid)), true)
			return
		}
	}
	if err := p.kill(a.pid, a.sig); err != nil {
		f.say(p.signalError(a.pid, err), true)
		return
	}
	f.say(f.t("signal.sent", sigName(a.sig), strconv.Itoa(a.pid)), false)
}

// signalError says why kill(2) failed in words a user acts on.
func (p *picker) signalError(pid int, err error) string {
	switch {
	case errors.Is(err, syscall.EPERM):
		return p.f.t("signal.eperm", strconv.Itoa(pid))
	case errors.Is(err, syscall.ESRCH):
		return p.f.t("signal.esrch", strconv.Itoa(pid))
	}
	return p.f.t("signal.error", strconv.Itoa(pid), err.Error())
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
