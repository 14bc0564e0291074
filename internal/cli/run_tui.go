package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/torchmem/torchmem/internal/supervisor"
	"github.com/torchmem/torchmem/internal/termsafe"
	"github.com/torchmem/torchmem/internal/units"
)

// runTUI is the --tui live view: a full-screen page of the job's memory,
// its last events and the tail of its output. The job writes to a log file
// meanwhile (a full-screen view and the job cannot share the terminal);
// its path is printed at the end.
type runTUI struct {
	p       *tea.Program
	done    chan struct{}
	notices *syncBuffer
	logPath string
}

// runSetupTUI sends the job's output to torchmem-ID.log and torchmem's own
// lines into the view. Without a terminal it says so and changes nothing.
func runSetupTUI(env *Env, cfg *supervisor.Config, id string, argv []string) (*runTUI, error) {
	if !cfg.StatusLine {
		fmt.Fprintln(env.Stderr, "torchmem: --tui needs a terminal on stderr; running without it")
		return nil, nil
	}
	path := "torchmem-" + id + ".log"
	logf, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("--tui: create the job's log: %w", err)
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		logf.Close()
		return nil, err
	}
	cfg.Stdout, cfg.Stderr, cfg.Stdin = logf, logf, devnull
	cfg.Interactive, cfg.StatusLine = false, false
	cfg.Env = append(cfg.Env, "PYTHONUNBUFFERED=1") // the tail stays current
	t := runStartTUI(env, "torchmem run "+id+": "+strings.Join(argv, " "), path)
	t.logPath = path
	cfg.Notices, cfg.OnLive = t.notices, t.live
	return t, nil
}

type runLiveMsg supervisor.Live
type runTickMsg struct{}

type runTUIModel struct {
	title, logPath string
	notices        *syncBuffer
	live           supervisor.Live
	tail           []string
	width, height  int
}

func runStartTUI(env *Env, title, logPath string) *runTUI {
	t := &runTUI{done: make(chan struct{}), notices: &syncBuffer{}}
	m := &runTUIModel{title: title, logPath: logPath, notices: t.notices}
	t.p = tea.NewProgram(m, tea.WithInput(os.Stdin), tea.WithOutput(env.Stderr))
	go func() {
		_, _ = t.p.Run()
		close(t.done)
	}()
	return t
}

// live is supervisor.Config.OnLive: it never blocks the supervisor.
func (t *runTUI) live(l supervisor.Live) {
	go t.p.Send(runLiveMsg(l))
}

// stop closes the view and prints what torchmem said meanwhile.
func (t *runTUI) stop(w io.Writer) {
	t.p.Quit()
	select {
	case <-t.done:
	case <-time.After(2 * time.Second):
	}
	io.WriteString(w, t.notices.String())
}

func (m *runTUIModel) Init() tea.Cmd { return runTick() }

func runTick() tea.Cmd {
	return tea.Tick(500*time.Millisecond, func(time.Time) tea.Msg { return runTickMsg{} })
}

func (m *runTUIModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
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

func (m *runTUIModel) View() tea.View {
	lines := []string{m.title, ""}
	if l := m.live; l.Usage != nil && l.Limit != nil && *l.Limit > 0 {
		lines = append(lines, "cgroup "+textBar(*l.Usage, *l.Limit, 40)+" "+units.Short(*l.Usage)+" / "+units.Short(*l.Limit))
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
		lines = append(lines, "  "+t)
	}
	lines = append(lines, "", "q close this view (the job goes on)   ctrl-c interrupt the job (twice: stop it)")
	if m.width > 0 {
		for i, l := range lines {
			if len(l) > m.width {
				lines[i] = l[:m.width]
			}
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
