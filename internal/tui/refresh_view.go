package tui

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
)

// RefreshConfig is a live view of something fetched every Interval and
// drawn as lines at the terminal's width: the cluster view of top
// --prometheus, whose data comes from a remote Prometheus.
type RefreshConfig struct {
	// Fetch gets the data and returns how to draw it at a width. An
	// error does not end the view (a Prometheus restarting is a passing
	// state): the last good view stays, under ErrorLine(err).
	Fetch     func(ctx context.Context) (func(width int) []string, error)
	Interval  time.Duration
	Loading   string
	Footer    string
	ErrorLine func(err error) string
	In        io.Reader
	Out       io.Writer
}

// RunRefresh shows the view until q, Ctrl-C or ctx ends.
func RunRefresh(ctx context.Context, c RefreshConfig) error {
	m := &refreshModel{cfg: c, ctx: ctx, width: 80}
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(c.In), tea.WithOutput(c.Out))
	if _, err := p.Run(); err != nil && ctx.Err() == nil {
		return fmt.Errorf("live view: %w", err)
	}
	return nil
}

type fetchedMsg struct {
	draw func(width int) []string
	err  error
}

type refreshModel struct {
	cfg           RefreshConfig
	ctx           context.Context
	draw          func(width int) []string
	err           error
	width, height int
	scroll        int
}

// fetch runs one Fetch off the UI goroutine; the next is scheduled when
// it returns, so a slow Prometheus is never asked twice at once.
func (m *refreshModel) fetch() tea.Cmd {
	ctx, f := m.ctx, m.cfg.Fetch
	return func() tea.Msg {
		draw, err := f(ctx)
		return fetchedMsg{draw, err}
	}
}

func (m *refreshModel) Init() tea.Cmd { return m.fetch() }

func (m *refreshModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case fetchedMsg:
		m.err = msg.err
		if msg.err == nil {
			m.draw = msg.draw
		}
		return m, tea.Tick(m.cfg.Interval, func(time.Time) tea.Msg { return tickMsg{} })
	case tickMsg:
		return m, m.fetch()
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case tea.KeyPressMsg:
		switch msg.String() {
		case "q", "ctrl+c", "esc":
			return m, tea.Quit
		case "down", "j":
			m.scroll++
		case "up", "k":
			m.scroll = max(0, m.scroll-1)
		case "home", "g":
			m.scroll = 0
		}
	}
	return m, nil
}

func (m *refreshModel) View() tea.View {
	lines := []string{m.cfg.Loading}
	if m.draw != nil {
		lines = m.draw(m.width)
	}
	if m.err != nil {
		lines = append([]string{m.cfg.ErrorLine(m.err)}, lines...)
	}
	if m.height > 1 && len(lines) > m.height-1 {
		m.scroll = min(m.scroll, len(lines)-(m.height-1))
		lines = lines[m.scroll : m.scroll+m.height-1]
	}
	v := tea.NewView(strings.Join(append(lines, m.cfg.Footer), "\n"))
	v.AltScreen = true
	return v
}
