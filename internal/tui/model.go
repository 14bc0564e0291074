package tui

import (
	"context"
	"fmt"
	"io"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"golang.org/x/text/language"

	"github.com/torchmem/torchmem/internal/sample"
)

// Config is what the live view needs.
type Config struct {
	Sampler  *sample.Sampler
	Interval time.Duration
	View     ViewOptions
	In       io.Reader
	Out      io.Writer
	// ProcRoot is the /proc the Sampler reads (per-process CPU and state,
	// /dev/shm mappings); Root the host's / (for /dev/shm's statfs).
	ProcRoot, Root string
	// Lang is the language of every text.
	Lang language.Tag
	// Now is the clock of CPU% (time.Now when nil).
	Now func() time.Time
	// Kill sends a signal (syscall.Kill when nil; tests record instead).
	Kill func(pid int, sig syscall.Signal) error
}

// Run shows the live view until q, Ctrl-C or ctx ends.
func Run(ctx context.Context, c Config) error {
	m, err := newModel(ctx, c)
	if err != nil {
		return err
	}
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(c.In), tea.WithOutput(c.Out))
	_, err = p.Run()
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("live view: %w", err)
	}
	return m.err
}

func newModel(ctx context.Context, c Config) (*model, error) {
	g, err := newGatherer(c.ProcRoot, c.Root, c.Now)
	if err != nil {
		return nil, err
	}
	if c.Kill == nil {
		c.Kill = syscall.Kill
	}
	m := &model{cfg: c, ctx: ctx, view: c.View, g: g}
	m.view.Interval, m.view.Lang = c.Interval, c.Lang
	m.f = frame{t: cat.T(c.Lang), st: newStyles(c.View.Color)}
	m.picker = picker{f: &m.f, kill: c.Kill, startOf: g.startOf}
	return m, nil
}

type sampleMsg struct {
	s     *sample.Sample
	extra *Extra
	err   error
}

type tickMsg struct{}

type model struct {
	cfg     Config
	ctx     context.Context
	view    ViewOptions
	last    *sample.Sample
	extra   *Extra
	err     error
	f       frame
	g       *gatherer
	editing bool   // typing a filter after "/"
	draft   string // the filter being typed
	refresh bool   // re-read PSS on the next collect
	picker         // the selected process and the signal question
}

// collect runs one Collect and the view's own reads off the UI
// goroutine. Only one is in flight at a time (the next tick is scheduled
// when it returns), so the Sampler and the gatherer are never used
// concurrently.
func (m *model) collect() tea.Cmd {
	refresh := m.refresh
	m.refresh = false
	s, g := m.cfg.Sampler, m.g
	ctx := m.ctx
	return func() tea.Msg {
		if refresh {
			s.RefreshPSS()
		}
		smp, err := s.Collect(ctx)
		if err != nil {
			return sampleMsg{err: err}
		}
		return sampleMsg{smp, g.gather(smp), nil}
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
		m.last, m.extra = msg.s, msg.extra
		return m, tea.Tick(m.cfg.Interval, func(time.Time) tea.Msg { return tickMsg{} })
	case tickMsg:
		return m, m.collect()
	case tea.WindowSizeMsg:
		m.view.Width, m.f.width, m.f.height = msg.Width, msg.Width, msg.Height
	case tea.KeyPressMsg:
		return m, m.key(msg)
	}
	return m, nil
}

func (m *model) key(k tea.KeyPressMsg) tea.Cmd {
	s := k.String()
	switch {
	case s == "ctrl+c":
		return tea.Quit
	case m.ask != nil:
		m.answer(s)
		return nil
	case m.editing:
		m.editKey(k)
		return nil
	case m.f.sharedKey(s):
		return nil
	}
	switch s {
	case "q":
		return tea.Quit
	case "esc": // closes what is open; never quits
		m.sel, m.f.status = 0, ""
	case "s":
		m.view.Sort = nextSort(m.view.Sort)
	case "r", "S":
		m.view.Reverse = !m.view.Reverse
	case "/":
		m.editing, m.draft = true, m.view.Filter
	case "e":
		m.view.Expand = !m.view.Expand
	case "p":
		m.refresh = true
	case "down", "j":
		m.move(1)
	case "up", "k":
		m.move(-1)
	case "x", "delete", "f9":
		m.askSignal()
	}
	return nil
}

func (m *model) editKey(k tea.KeyPressMsg) {
	switch k.String() {
	case "enter":
		m.view.Filter, m.editing, m.f.scroll = m.draft, false, 0
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

// options are the view's options with what the model holds.
func (m *model) options() ViewOptions {
	o := m.view
	o.Extra, o.Selected = m.extra, m.sel
	return o
}

// move selects the process row d rows down (up when negative); the
// first move selects the first row.
func (m *model) move(d int) {
	if m.last != nil {
		m.pick(render(m.last, m.options()).rows, d)
	}
}

// askSignal opens the signal question on the selected process, with its
// start time as gathered with the sample.
func (m *model) askSignal() {
	var rows []procRow
	if m.last != nil {
		rows = render(m.last, m.options()).rows
	}
	var start uint64
	if m.extra != nil {
		start = m.extra.Procs[m.sel].StartTicks
	}
	m.openAsk(rows, start)
}

func (m *model) View() tea.View {
	var content string
	if m.last == nil {
		content = m.f.draw([]string{m.f.t("top.loading")}, nil, -1, m.footer(), topHelp)
	} else {
		rd := render(m.last, m.options())
		cursor := -1
		if i, moved := m.cursor(rd.rows); i >= 0 {
			if moved { // it exited: the row now there is selected
				rd = render(m.last, m.options())
			}
			cursor = rd.rows[i].line - rd.head
		}
		content = m.f.draw(rd.lines[:rd.head], rd.lines[rd.head:], cursor, m.footer(), topHelp)
	}
	v := tea.NewView(content)
	v.AltScreen = true
	return v
}

func (m *model) footer() string {
	switch {
	case m.ask != nil:
		return m.question()
	case m.editing:
		return m.f.t("footer.filter", m.draft)
	}
	return m.f.t("footer.top")
}

// topHelp is top's help overlay, in the order people look for keys.
var topHelp = append([]helpItem{
	{"q ctrl-c", "help.q"},
	{"↑ ↓ j k", "help.select"},
	{"x", "help.signal"},
	{"s", "help.sort"},
	{"r", "help.reverse"},
	{"e", "help.fold"},
	{"/", "help.filter"},
	{"p", "help.pss"},
}, sharedHelp...)
