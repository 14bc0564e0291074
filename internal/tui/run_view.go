package tui

import (
	"bytes"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"golang.org/x/text/language"

	"github.com/torchmem/torchmem/internal/i18n"
	"github.com/torchmem/torchmem/internal/procfs"
	"github.com/torchmem/torchmem/internal/sample"
	"github.com/torchmem/torchmem/internal/supervisor"
	"github.com/torchmem/torchmem/internal/termsafe"
	"github.com/torchmem/torchmem/internal/textwrap"
	"github.com/torchmem/torchmem/internal/units"
)

// RunView is torchmem run --tui's live view: a full-screen page of the
// job's memory (supervisor.Live) with its recent history, the job's
// process table (top's, from the supervisor's own sample: selectable, a
// signal to one process on x after a question), its last events,
// torchmem's notices and the tail of the job's output, which the job
// writes to LogPath meanwhile. It draws on the same frame as top
// (frame.go): the same header, status line, footer, help on ? and keys.
type RunView struct {
	// LogPath is the job's output file, tailed in the view.
	LogPath string
	p       *tea.Program
	done    chan struct{}
	notices *SyncBuffer
	// lives hands each Live to the gathering goroutine; it holds one,
	// the newest (a slow /proc read drops a tick, never blocks one).
	lives chan supervisor.Live
}

// StartRunView shows the view on out in lang, reading keys from in, until
// Stop.
func StartRunView(in io.Reader, out io.Writer, title, logPath string, lang language.Tag) *RunView {
	v := &RunView{LogPath: logPath, done: make(chan struct{}), notices: &SyncBuffer{}, lives: make(chan supervisor.Live, 1)}
	m := newRunModel(title, logPath, v.notices, lang)
	v.p = tea.NewProgram(m, tea.WithInput(in), tea.WithOutput(out))
	go func() {
		_, _ = v.p.Run()
		close(v.done)
	}()
	g, err := newGatherer("/proc", "/", nil)
	go v.gather(g, err)
	return v
}

// gather reads each Live's per-process state and CPU% (/proc/<pid>/stat),
// the job's /dev/shm and RSS history, as top does, off both the
// supervisor's and the UI's goroutines. Without a /proc the table shows
// none of it. The sample the supervisor took is not read again.
func (v *RunView) gather(g *gatherer, gerr error) {
	for {
		select {
		case <-v.done:
			return
		case l := <-v.lives:
			msg := runLiveMsg{live: l}
			if gerr == nil {
				msg.extra = g.gather(&sample.Sample{Jobs: l.Jobs})
			}
			v.p.Send(msg)
		}
	}
}

// Notices is where torchmem's own lines go while the view is up: shown in
// it, and printed by Stop.
func (v *RunView) Notices() io.Writer { return v.notices }

// Live is supervisor.Config.OnLive: it never blocks the supervisor.
func (v *RunView) Live(l supervisor.Live) {
	for {
		select {
		case v.lives <- l:
			return
		default:
		}
		select { // full: drop the older one, not this one
		case <-v.lives:
		default:
		}
	}
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
// brackets: run --tui's cgroup usage, top's memory columns, snapshot's
// reading progress.
func Bar(v, limit int64, width int) string {
	n := 0
	if limit > 0 {
		n = int(float64(width) * float64(v) / float64(limit))
	}
	n = min(max(n, 0), width)
	return "[" + strings.Repeat("#", n) + strings.Repeat(".", width-n) + "]"
}

// runLiveMsg is one tick of the supervisor, with what the view gathered
// beside it (nil: nothing).
type runLiveMsg struct {
	live  supervisor.Live
	extra *Extra
}
type runTickMsg struct{}

// runTailLines is how much of the job's output the view keeps to scroll.
const runTailLines = 500

// runEventLines is how many of the last events, and of torchmem's last
// notices, the view keeps above the job's output: at 24 rows, the output
// still has half the screen.
const runEventLines = 4

type runModel struct {
	title, logPath string
	notices        *SyncBuffer
	live           supervisor.Live
	extra          *Extra   // CPU%, state, /dev/shm of the last Live
	history        []uint64 // the cgroup's usage at each Live, oldest first
	tail           []string
	f              frame
	follow         bool // the body shows its end (the newest output) until scrolled up
	lang           language.Tag
	color          bool
	expand         bool // the table lists every DataLoader worker (e)
	picker              // the selected process and the signal question
}

func newRunModel(title, logPath string, notices *SyncBuffer, lang language.Tag) *runModel {
	color := os.Getenv("NO_COLOR") == ""
	m := &runModel{title: title, logPath: logPath, notices: notices, follow: true, lang: lang, color: color,
		f: frame{t: cat.T(lang), st: newStyles(color)}}
	m.picker = picker{f: &m.f, kill: syscall.Kill}
	if fs, err := procfs.NewFS("/proc"); err == nil {
		m.startOf = func(pid int) (uint64, error) {
			st, err := fs.Stat(pid)
			return st.StartTicks, err
		}
	}
	return m
}

func (m *runModel) Init() tea.Cmd { return runTick() }

func runTick() tea.Cmd {
	return tea.Tick(500*time.Millisecond, func(time.Time) tea.Msg { return runTickMsg{} })
}

func (m *runModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case runLiveMsg:
		m.live, m.extra = msg.live, msg.extra
		if m.live.Usage != nil {
			h := append(m.history, uint64(max(0, *m.live.Usage)))
			m.history = h[max(0, len(h)-HistoryLen):]
		}
	case runTickMsg:
		m.tail = runTail(m.logPath, 64<<10)
		return m, runTick()
	case tea.WindowSizeMsg:
		m.f.width, m.f.height = msg.Width, msg.Height
	case tea.KeyPressMsg:
		return m, m.key(msg.String())
	}
	return m, nil
}

func (m *runModel) key(k string) tea.Cmd {
	if k == "ctrl+c" {
		// The terminal is in raw mode: Ctrl-C is a key here. Deliver it
		// as the signal torchmem forwards (and escalates on repeat).
		_ = syscall.Kill(os.Getpid(), syscall.SIGINT)
		return nil
	}
	if m.ask != nil {
		m.answer(k)
		return nil
	}
	if m.f.sharedKey(k) {
		m.follow = k == "end" || (m.follow && k != "pgup" && k != "home")
		return nil
	}
	switch k {
	case "q":
		return tea.Quit // the job goes on; only the view closes
	case "esc":
		m.sel, m.f.status = 0, ""
	case "up", "k":
		m.pick(m.table().rows, -1)
	case "down", "j":
		m.pick(m.table().rows, 1)
	case "x", "delete", "f9":
		m.openAsk(m.table().rows, 0) // its start time is read now: the sample has none
	case "e":
		m.expand = !m.expand
	case "G":
		m.follow = true
	}
	return nil
}

// runPartsLines is how many lines the status fields may take: joined,
// they leave the rows to the process table and the output.
const runPartsLines = 2

// runPartsSep is what sets the status fields apart on their line.
const runPartsSep = " · "

// table is the job's process table as top draws a job, from the last
// Live: its memory bars against the cgroup's limit (the host's memory
// without one).
func (m *runModel) table() rendered {
	limit := m.live.HostTotal
	if l := m.live.Limit; l != nil && *l > 0 {
		limit = *l
	}
	return jobTable(m.live.Jobs, limit, ViewOptions{Width: m.f.width, Color: m.color, Lang: m.lang,
		Expand: m.expand, Selected: m.sel, Extra: m.extra})
}

func (m *runModel) View() tea.View {
	head := []string{m.f.st.title.Render(termsafe.Line(m.title))}
	if l := m.live; l.Usage != nil && l.Limit != nil && *l.Limit > 0 {
		line := m.f.t("run.cgroup", Bar(*l.Usage, *l.Limit, 40), units.Short(*l.Usage), units.Short(*l.Limit))
		if m.f.width >= WideWidth && len(m.history) > 0 {
			line = join(line, m.f.t("run.history", sparkline(m.history)))
		}
		head = append(head, line)
	}
	if len(m.live.Parts) > 0 {
		w := m.f.width
		if w <= 0 {
			w = 80
		}
		parts := strings.Split(textwrap.Wrap("  ", strings.Join(m.live.Parts, runPartsSep), w), "\n")
		head = append(head, parts[:min(runPartsLines, len(parts))]...)
	}
	rd := m.table()
	if _, moved := m.cursor(rd.rows); moved { // it exited: the row now there is selected
		rd = m.table()
	}
	head = append(head, rd.lines...)
	// Events and notices stay in sight above the job's output, which
	// scrolls: the last few of each.
	head = append(head, m.f.st.header.UnsetUnderline().Render(m.f.t("run.events")))
	for _, e := range m.live.Events[max(0, len(m.live.Events)-runEventLines):] {
		head = append(head, "  "+e.Time.Local().Format("15:04:05")+" "+i18n.PadRight(e.Source, 8)+" "+
			i18n.PadRight(termsafe.Line(e.Kind), 16)+" "+termsafe.Line(e.Message))
	}
	notices := strings.Split(strings.TrimSpace(m.notices.String()), "\n")
	for _, n := range notices[max(0, len(notices)-runEventLines):] {
		if n != "" {
			head = append(head, "  "+termsafe.Line(n))
		}
	}
	head = append(head, m.f.st.header.UnsetUnderline().Render(m.f.t("run.output", m.logPath)))
	var body []string
	for _, t := range m.tail[max(0, len(m.tail)-runTailLines):] {
		// The job's own output, replayed by torchmem: its control
		// sequences would redraw or retitle this view.
		body = append(body, "  "+termsafe.Line(t))
	}
	if m.follow {
		m.f.scroll = 1 << 30 // draw clamps it to the end
	}
	footer := m.f.t("footer.run")
	if m.ask != nil {
		footer = m.question()
	}
	var content string
	if m.f.help {
		// The help takes the screen below the title, from its top: under
		// the figures, the table and the events, 24 rows would leave it
		// a few lines scrolled to the output's end.
		at := m.f.scroll
		m.f.scroll = 0
		content = m.f.draw(head[:1], nil, -1, footer, runHelp)
		m.f.scroll = at
	} else {
		content = m.f.draw(head, body, -1, footer, runHelp)
	}
	v := tea.NewView(content)
	v.AltScreen = true
	return v
}

// runHelp is run --tui's help overlay.
var runHelp = append([]helpItem{
	{"q", "help.run.q"},
	{"ctrl-c", "help.run.ctrlc"},
	{"↑ ↓ j k", "help.select"},
	{"x", "help.run.signal"},
	{"e", "help.fold"},
	{"Home End G", "help.run.scroll"},
}, sharedHelp...)

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
