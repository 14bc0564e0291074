package tui

import (
	"context"
	"fmt"
	"io"
	"time"

	tea "charm.land/bubbletea/v2"
	"golang.org/x/text/language"
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
	// Lang is the language of the help overlay (English when zero).
	Lang language.Tag
}

// RunRefresh shows the view until q, Ctrl-C or ctx ends.
func RunRefresh(ctx context.Context, c RefreshConfig) error {
	m := &refreshModel{cfg: c, ctx: ctx, f: frame{t: cat.T(c.Lang), st: newStyles(false), width: 80}}
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

// refreshModel draws on top's frame (frame.go), with its keys: ? help,
// esc closes the help and never quits, q and Ctrl-C quit.
type refreshModel struct {
	cfg  RefreshConfig
	ctx  context.Context
	draw func(width int) []string
	err  error
	f    frame
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
		m.f.width, m.f.height = msg.Width, msg.Height
	case tea.KeyPressMsg:
		k := msg.String()
		if k == "ctrl+c" {
			return m, tea.Quit
		}
		if m.f.sharedKey(k) {
			return m, nil
		}
		switch k {
		case "q":
			return m, tea.Quit
		case "down", "j":
			m.f.scroll++
		case "up", "k":
			m.f.scroll = max(0, m.f.scroll-1)
		case "g":
			m.f.scroll = 0
		}
	}
	return m, nil
}

func (m *refreshModel) View() tea.View {
	lines := []string{m.cfg.Loading}
	if m.draw != nil {
		lines = m.draw(m.f.width)
	}
	if m.err != nil {
		lines = append([]string{m.cfg.ErrorLine(m.err)}, lines...)
	}
	v := tea.NewView(m.f.draw(nil, lines, -1, m.cfg.Footer, refreshHelp))
	v.AltScreen = true
	return v
}

// refreshHelp is the help overlay of a refreshing view.
var refreshHelp = append([]helpItem{
	{"q ctrl-c", "help.q"},
	{"↑ ↓ j k", "help.scroll"},
}, sharedHelp...)
