package tui

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/torchmem/torchmem/internal/supervisor"
	"github.com/torchmem/torchmem/internal/termsafe"
	"github.com/torchmem/torchmem/internal/textwrap"
	"github.com/torchmem/torchmem/internal/units"
)

// RunView is torchmem run --tui's live view: a full-screen page of the
// job's memory (supervisor.Live), its last events, torchmem's notices and
// the tail of the job's output, which the job writes to LogPath meanwhile.
type RunView struct {
	// LogPath is the job's output file, tailed in the view.
	LogPath string
	p       *tea.Program
	done    chan struct{}
	notices *SyncBuffer
}

// StartRunView shows the view on out, reading keys from in, until Stop.
func StartRunView(in io.Reader, out io.Writer, title, logPath string) *RunView {
	v := &RunView{LogPath: logPath, done: make(chan struct{}), notices: &SyncBuffer{}}
	m := &runModel{title: title, logPath: logPath, notices: v.notices}
	v.p = tea.NewProgram(m, tea.WithInput(in), tea.WithOutput(out))
	go func() {
		_, _ = v.p.Run()
		close(v.done)
	}()
	return v
}

// Notices is where torchmem's own lines go while the view is up: shown in
// it, and printed by Stop.
func (v *RunView) Notices() io.Writer { return v.notices }

// Live is supervisor.Config.OnLive: it never blocks the supervisor.
func (v *RunView) Live(l supervisor.Live) {
	go v.p.Send(runLiveMsg(l))
}

// Stop closes the view and prints what torchmem said meanwhile on w.
func (v *RunView) Stop(w io.Writer) {
	v.p.Quit()
	select {
	case <-v.done:
	case <-time.After(2 * time.Second):
	}
	io.WriteString(w, v.notices.String())
}

// Bar draws v of limit as [####......], width characters inside the
// brackets: run --tui's cgroup usage, snapshot's reading progress.
func Bar(v, limit int64, width int) string {
	n := int(float64(width) * float64(v) / float64(limit))
	n = min(max(n, 0), width)
	return "[" + strings.Repeat("#", n) + strings.Repeat(".", width-n) + "]"
}

type runLiveMsg supervisor.Live
type runTickMsg struct{}

type runModel struct {
	title, logPath string
	notices        *SyncBuffer
	live           supervisor.Live
	tail           []string
	width, height  int
}

func (m *runModel) Init() tea.Cmd { return runTick() }

func runTick() tea.Cmd {
	return tea.Tick(500*time.Millisecond, func(time.Time) tea.Msg { return runTickMsg{} })
}

func (m *runModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case runLiveMsg:
		m.live = supervisor.Live(msg)
	case runTickMsg:
		m.tail = runTail(m.logPath, 64<<10)
		return m, runTick()
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case tea.KeyPressMsg:
		switch msg.String() {
		case "q":
			return m, tea.Quit // the job goes on; only the view closes
		case "ctrl+c":
			// The terminal is in raw mode: Ctrl-C is a key here. Deliver it
			// as the signal torchmem forwards (and escalates on repeat).
			_ = syscall.Kill(os.Getpid(), syscall.SIGINT)
		}
	}
	return m, nil
}

func (m *runModel) View() tea.View {
	lines := []string{m.title, ""}
	if l := m.live; l.Usage != nil && l.Limit != nil && *l.Limit > 0 {
		lines = append(lines, "cgroup "+Bar(*l.Usage, *l.Limit, 40)+" "+units.Short(*l.Usage)+" / "+units.Short(*l.Limit))
	}
	for _, p := range m.live.Parts {
		lines = append(lines, "  "+p)
	}
	lines = append(lines, "", "events:")
	for _, e := range m.live.Events {
		lines = append(lines, fmt.Sprintf("  %s %-8s %-16s %s", e.Time.Local().Format("15:04:05"), e.Source, termsafe.Line(e.Kind), termsafe.Line(e.Message)))
	}
	for _, n := range strings.Split(strings.TrimSpace(m.notices.String()), "\n") {
		if n != "" {
			lines = append(lines, "  "+n)
		}
	}
	lines = append(lines, "", "job output ("+m.logPath+"):")
	room := m.height - len(lines) - 2
	if room < 3 {
		room = 3
	}
	tail := m.tail[max(0, len(m.tail)-room):]
	for _, t := range tail {
		// The job's own output, replayed by torchmem: its control
		// sequences would redraw or retitle this view.
		lines = append(lines, "  "+termsafe.Line(t))
	}
	lines = append(lines, "", "q close this view (the job goes on)   ctrl-c interrupt the job (twice: stop it)")
	if m.width > 0 {
		for i, l := range lines {
			lines[i] = textwrap.Cut(l, m.width)
		}
	}
	v := tea.NewView(strings.Join(lines, "\n"))
	v.AltScreen = true
	return v
}

// runTail returns the last lines of at most max bytes at the end of path.
func runTail(path string, max int64) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil
	}
	off := st.Size() - max
	if off < 0 {
		off = 0
	}
	b := make([]byte, st.Size()-off)
	n, _ := f.ReadAt(b, off)
	s := strings.TrimRight(string(b[:n]), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(strings.ReplaceAll(s, "\r", ""), "\n")
}

// SyncBuffer is a bytes.Buffer one goroutine writes while another reads
// it: the supervisor's notices while the view draws them (and tests
// reading a command's output as it runs).
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
