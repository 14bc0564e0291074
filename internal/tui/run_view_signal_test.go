package tui

import (
	"strconv"
	"strings"
	"syscall"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/torchmem/torchmem/internal/i18n"
	"github.com/torchmem/torchmem/internal/sample/sampletest"
	"github.com/torchmem/torchmem/internal/supervisor"
)

// runSignalModel is run --tui's view of the fixture job with 2 workers,
// as the supervisor's Live carries it, on a w×h terminal; kills are
// recorded and answered with err, start times read as start says.
func runSignalModel(t *testing.T, w, h int, err error, start func(int) (uint64, error)) (*runModel, *[]kill) {
	t.Helper()
	smp := fixtureSample(t, 2)
	var kills []kill
	m := newRunModel("torchmem run abc: python3 train.py", "job.log", &SyncBuffer{}, i18n.EN)
	m.kill = func(pid int, sig syscall.Signal) error { kills = append(kills, kill{pid, sig}); return err }
	m.startOf = start
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	m.Update(runLiveMsg{live: supervisor.Live{Parts: []string{"step 1"}, Jobs: smp.Jobs, HostTotal: 64 << 30}})
	return m, &kills
}

// run --tui selects a process of the job with j/k or the arrows and
// sends it one signal after a question, as top does: x asks TERM, k
// makes it KILL, y sends to that PID only; n sends nothing; esc drops
// the selection; up/k and down/j no longer scroll the output.
func TestRunViewSelectSignal(t *testing.T) {
	starts := uint64(7)
	m, kills := runSignalModel(t, 120, 40, nil, func(int) (uint64, error) { return starts, nil })
	view := func() string { return m.View().Content }
	if !strings.Contains(view(), "JOB 2000") || !strings.Contains(view(), "2 workers folded") {
		t.Fatalf("no process table:\n%s", view())
	}
	m.Update(key("x"))
	if !strings.Contains(view(), "no process selected") {
		t.Errorf("x without a selection:\n%s", view())
	}
	m.Update(key("e"))
	m.Update(key("j"))
	if m.sel != sampletest.MainPID {
		t.Fatalf("j selected %d, not the main process", m.sel)
	}
	m.Update(key("down"))
	sel := m.sel
	if sel == sampletest.MainPID || !strings.Contains(view(), ">  "+strconv.Itoa(sel)) {
		t.Fatalf("j down selected %d:\n%s", sel, view())
	}
	m.Update(key("x"))
	if !strings.Contains(view(), "send SIGTERM to pid "+strconv.Itoa(sel)+" (") {
		t.Errorf("x asks no question:\n%s", view())
	}
	m.Update(key("k"))
	m.Update(key("y"))
	if len(*kills) != 1 || (*kills)[0] != (kill{sel, syscall.SIGKILL}) || !strings.Contains(view(), "sent SIGKILL to pid "+strconv.Itoa(sel)) {
		t.Errorf("kills %v:\n%s", *kills, view())
	}
	m.Update(key("x"))
	m.Update(key("n"))
	if len(*kills) != 1 || !strings.Contains(view(), "nothing sent") {
		t.Errorf("n sent a signal: %v", *kills)
	}
	// The PID was reused between the question and the answer: nothing
	// is sent.
	m.Update(key("x"))
	starts = 8
	m.Update(key("y"))
	if len(*kills) != 1 || !strings.Contains(view(), "pid "+strconv.Itoa(sel)+" is now another process") {
		t.Errorf("a reused PID was signalled: %v:\n%s", *kills, view())
	}
	m.Update(key("k"))
	if m.sel == sel {
		t.Error("k does not move the selection up")
	}
	m.Update(key("esc"))
	if m.sel != 0 || m.f.status != "" {
		t.Error("esc keeps the selection or the status")
	}
}

// kill(2)'s failures are said in words: EPERM and ESRCH.
func TestRunViewSignalErrors(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{{syscall.EPERM, "not permitted"}, {syscall.ESRCH, "no such process"}} {
		m, kills := runSignalModel(t, 80, 24, c.err, nil)
		m.Update(key("j"))
		m.Update(key("x"))
		m.Update(key("y"))
		if len(*kills) != 1 || !strings.Contains(m.View().Content, c.want) {
			t.Errorf("%v: kills %v:\n%s", c.err, *kills, m.View().Content)
		}
	}
}
