package tui

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/torchmem/torchmem/internal/sample"
)

// Config is what the live view needs.
type Config struct {
	Sampler  *sample.Sampler
	Interval time.Duration
	View     ViewOptions
	In       io.Reader
	Out      io.Writer
}

// Run shows the live view until q, Ctrl-C or ctx ends.
func Run(ctx context.Context, c Config) error {
	m := &model{cfg: c, ctx: ctx, view: c.View}
	m.view.Interval = c.Interval
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(c.In), tea.WithOutput(c.Out))
	_, err := p.Run()
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("live view: %w", err)
	}
	return m.err
}

type sampleMsg struct {
	s   *sample.Sample
	err error
}

type tickMsg struct{}

type model struct {
	cfg     Config
	ctx     context.Context
	view    ViewOptions
	last    *sample.Sample
	err     error
	height  int
	scroll  int
	editing bool   // typing a filter after "/"
	draft   string // the filter being typed
	refresh bool   // re-read PSS on the next collect
}

// collect runs one Collect off the UI goroutine. Only one is in flight at
// a time (the next tick is scheduled when it returns), so the Sampler is
// never used concurrently.
func (m *model) collect() tea.Cmd {
	refresh := m.refresh
	m.refresh = false
	s := m.cfg.Sampler
	ctx := m.ctx
	return func() tea.Msg {
		if refresh {
			s.RefreshPSS()
		}
		smp, err := s.Collect(ctx)
		return sampleMsg{smp, err}
	}
}

func (m *model) Init() tea.Cmd { return m.collect() }

func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case sampleMsg:
		if msg.err != nil {
			m.err = msg.err
			return m, tea.Quit
		}
		m.last = msg.s
		return m, tea.Tick(m.cfg.Interval, func(time.Time) tea.Msg { return tickMsg{} })
	case tickMsg:
		return m, m.collect()
	case tea.WindowSizeMsg:
		m.view.Width, m.height = msg.Width, msg.Height
	case tea.KeyPressMsg:
		return m, m.key(msg)
	}
	return m, nil
}

func (m *model) key(k tea.KeyPressMsg) tea.Cmd {
	if m.editing {
		m.editKey(k)
		return nil
	}
	switch k.String() {
	case "q", "ctrl+c", "esc":
		return tea.Quit
	case "s":
		m.view.Sort = nextSort(m.view.Sort)
	case "/":
		m.editing, m.draft = true, m.view.Filter
	case "e":
		m.view.Expand = !m.view.Expand
	case "p":
		m.refresh = true
	case "down", "j":
		m.scroll++
	case "up", "k":
		m.scroll = max(0, m.scroll-1)
	case "pgdown", "space":
		m.scroll += max(1, m.height-4)
	case "pgup":
		m.scroll = max(0, m.scroll-max(1, m.height-4))
	case "home", "g":
		m.scroll = 0
	}
	return nil
}

func (m *model) editKey(k tea.KeyPressMsg) {
	switch k.String() {
	case "enter":
		m.view.Filter, m.editing, m.scroll = m.draft, false, 0
	case "esc":
		m.editing = false
	case "ctrl+u":
		m.draft = ""
	case "backspace":
		if r := []rune(m.draft); len(r) > 0 {
			m.draft = string(r[:len(r)-1])
		}
	default:
		m.draft += k.Text
	}
}

func (m *model) View() tea.View {
	var lines []string
	if m.last == nil {
		lines = []string{"torchmem top: reading /proc and the GPUs…"}
	} else {
		lines = Render(m.last, m.view)
	}
	footer := "q quit  s sort  / filter  e workers  p re-read PSS  ↑↓ scroll"
	if m.editing {
		footer = "filter: " + m.draft + "▏ (enter apply, esc cancel)"
	}
	if m.height > 1 && len(lines) > m.height-1 {
		m.scroll = min(m.scroll, len(lines)-(m.height-1))
		lines = lines[m.scroll : m.scroll+m.height-1]
	}
	v := tea.NewView(strings.Join(append(lines, footer), "\n"))
	v.AltScreen = true
	return v
}
