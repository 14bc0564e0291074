// Package tui renders Samples for people: the live `torchmem top` view
// (bubbletea + lipgloss), its --once table through the same Render, and
// torchmem run --tui's live view of a supervised job (RunView). Both live
// views share one frame (frame.go): a pinned header, a body that scrolls,
// a status line, a footer of keys, a help overlay on ? and the same keys
// for the same things. Every line is cut by display width (i18n.Cut: a
// CJK character is two columns and is never split); every text comes from
// the catalog in messages_en.go and messages_zh.go.
package tui

import (
	"strconv"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"golang.org/x/text/language"

	"github.com/torchmem/torchmem/internal/i18n"
	"github.com/torchmem/torchmem/internal/sample"
	"github.com/torchmem/torchmem/internal/termsafe"
	"github.com/torchmem/torchmem/internal/textwrap"
	"github.com/torchmem/torchmem/internal/units"
)

// ViewOptions says how to render a Sample.
type ViewOptions struct {
	Sort string // one of SortKeys; "pss" when empty
	// Reverse sorts smallest first (lowest PID last for "pid").
	Reverse bool
	Filter  string
	// Expand lists every DataLoader worker; otherwise each parent's leaf
	// workers are folded into one summed row, marked ▸ (▾ when listed).
	Expand bool
	Width  int  // 80 when zero
	Color  bool // false: plain text, no escape sequences (NO_COLOR, --once)
	// Interval is shown in the header of the live view; zero hides it.
	Interval time.Duration
	// Lang is the language of every text; English when zero.
	Lang language.Tag
	// Extra is what the live view gathers beside the sample (CPU%, state,
	// /dev/shm, history); nil shows none of it.
	Extra *Extra
	// Selected is the PID of the selected process row; 0 for none.
	Selected int
}

type styles struct {
	title, header, warn, dim, notice, plain, selected lipgloss.Style
}

func newStyles(color bool) styles {
	p := lipgloss.NewStyle()
	if !color {
		return styles{p, p, p, p, p, p, p}
	}
	return styles{
		title:    lipgloss.NewStyle().Bold(true),
		header:   lipgloss.NewStyle().Bold(true).Underline(true),
		warn:     lipgloss.NewStyle().Foreground(lipgloss.Color("9")).Bold(true),
		dim:      lipgloss.NewStyle().Faint(true),
		notice:   lipgloss.NewStyle().Foreground(lipgloss.Color("11")),
		plain:    p,
		selected: lipgloss.NewStyle().Reverse(true),
	}
}

// Render returns the whole view of s as lines of at most o.Width columns.
func Render(s *sample.Sample, o ViewOptions) []string {
	return render(s, o).lines
}

// rendered is a view with what the live view needs to know of it: how
// many lines at the top stay in place, and which lines are process rows.
type rendered struct {
	lines []string
	head  int
	rows  []procRow
}

// procRow is a selectable line: a process.
type procRow struct {
	line int
	pid  int
	cmd  string
}

func render(s *sample.Sample, o ViewOptions) rendered {
	r := newRenderer(o)
	r.header(s)
	r.sources(s)
	r.head = len(r.lines)
	r.gpus(s)
	for _, n := range s.Notices {
		r.wrapped(r.st.notice, "! ", n)
	}
	js := orderJobs(s.Jobs, o.Sort, o.Filter, o.Reverse)
	if len(js) == 0 {
		if o.Filter != "" {
			r.line(r.st.dim, r.t("jobs.nonematch", strconv.Quote(o.Filter)))
		} else {
			r.line(r.st.dim, r.t("jobs.none"))
		}
	}
	for _, j := range js {
		r.job(j)
	}
	return rendered{lines: r.lines, head: r.head, rows: r.rows}
}

// newRenderer starts a render with o's defaults filled in.
func newRenderer(o ViewOptions) *renderer {
	if o.Width <= 0 {
		o.Width = 80
	}
	if o.Sort == "" {
		o.Sort = "pss"
	}
	r := &renderer{o: o, st: newStyles(o.Color), t: cat.T(o.Lang), wide: o.Width >= WideWidth, labels: map[string]string{}}
	r.cols = narrowCols
	if r.wide {
		r.cols = wideCols
	}
	return r
}

type renderer struct {
	o     ViewOptions
	st    styles
	t     func(string, ...any) string
	wide  bool
	cols  []column
	lines []string
	head  int
	rows  []procRow
	// hostTotal is MemTotal: a process's memory bar is drawn against it
	// when its job's cgroup has no limit.
	hostTotal int64
	// labels caches the texts without arguments (roles, headings) that
	// every row repeats: the catalog's printer formats each call anew.
	labels map[string]string
}

// label is r.t(id) for a text without arguments, looked up once a render.
func (r *renderer) label(id string) string {
	l, ok := r.labels[id]
	if !ok {
		l = r.t(id)
		r.labels[id] = l
	}
	return l
}

// line cuts text to the width before styling, so escapes never get cut.
// The text holds processes' command lines and names: their control
// characters are escaped (termsafe) so that only the styles' own reach
// the terminal.
func (r *renderer) line(st lipgloss.Style, text string) {
	text = i18n.Cut(termsafe.Line(text), r.o.Width)
	if r.o.Color {
		// Without colour every style is plain, and lipgloss's Render,
		// which checks borders, margins and padding, would cost more than
		// the rest of the line.
		text = st.Render(text)
	}
	r.lines = append(r.lines, text)
}

// plainLine is line in the plain style, which lipgloss would leave as it
// is: the process rows, most of the view.
func (r *renderer) plainLine(text string) {
	r.lines = append(r.lines, i18n.Cut(termsafe.Line(text), r.o.Width))
}

// wrapped breaks text at spaces into lines of the width (textwrap.Wrap),
// the first after prefix and the rest indented as far: a notice says why
// something is missing, and its end is the part a cut would lose. At most
// three lines; a word longer than a line is cut by line.
func (r *renderer) wrapped(st lipgloss.Style, prefix, text string) {
	lines := strings.Split(textwrap.Wrap(prefix, text, r.o.Width), "\n")
	for _, l := range lines[:min(3, len(lines))] {
		r.line(st, l)
	}
}

// pct2 formats a percentage with two decimals, as /proc/pressure has.
// Numbers reach the catalog as text: its printer would group digits
// ("2,000") in a PID.
func pct2(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

// join puts the non-empty parts of a line two spaces apart.
func join(parts ...string) string {
	out := parts[:0:0]
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "  ")
}

func size(p *uint64) string {
	if p == nil {
		return "-"
	}
	return units.Short(int64(*p))
}

func size64(p *int64) string {
	if p == nil {
		return "-"
	}
	return units.Short(*p)
}

// sortLabel is the sort key as the header shows it, with its direction.
func (r *renderer) sortLabel() string {
	mark := r.t("sort.desc")
	if r.o.Reverse {
		mark = r.t("sort.asc")
	}
	if r.o.Sort == "pid" { // lowest first is pid's natural order
		mark = r.t("sort.asc")
		if r.o.Reverse {
			mark = r.t("sort.desc")
		}
	}
	return strings.ToUpper(r.o.Sort) + mark
}

func (r *renderer) header(s *sample.Sample) {
	t := r.t("top.title", s.Time.Format("15:04:05"), r.sortLabel())
	if r.o.Interval > 0 {
		t = join(t, r.t("top.every", r.o.Interval.String()))
	}
	if r.o.Filter != "" {
		t = join(t, r.t("top.filter", strconv.Quote(r.o.Filter)))
	}
	r.line(r.st.title, t)
	m := s.Host.Meminfo
	if m.MemTotalBytes != nil {
		r.hostTotal = int64(*m.MemTotalBytes)
	}
	parts := []string{r.t("host.label")}
	if m.MemAvailableBytes != nil && m.MemTotalBytes != nil {
		parts = append(parts, r.t("host.avail", size(m.MemAvailableBytes), size(m.MemTotalBytes)))
	}
	if m.SwapTotalBytes != nil && *m.SwapTotalBytes > 0 && m.SwapFreeBytes != nil {
		used := *m.SwapTotalBytes - *m.SwapFreeBytes
		parts = append(parts, r.t("host.swap", size(&used), size(m.SwapTotalBytes)))
	} else {
		parts = append(parts, r.t("host.noswap"))
	}
	if p := s.Host.PSI; p != nil && p.Some != nil {
		psi := r.t("host.psi", pct2(p.Some.Avg10))
		if p.Full != nil {
			psi += " " + r.t("host.psifull", pct2(p.Full.Avg10))
		}
		parts = append(parts, psi)
	}
	parts = append(parts, r.t("host.cgroup", s.Host.CgroupMode))
	if e := r.o.Extra; e != nil && e.HostShm != nil && r.wide { // at 80 columns the line is full
		parts = append(parts, r.t("host.shm", units.Short(int64(e.HostShm.UsedBytes)), units.Short(int64(e.HostShm.SizeBytes))))
	}
	st := r.st.dim
	if p := s.Host.PSI; p != nil && p.Some != nil && p.Some.Avg10 >= 10 {
		st = r.st.warn
	}
	r.line(st, join(parts...))
}

// sources says once, for every job, where the figures came from: each
// total's source, in the order the jobs list them, without repeats.
func (r *renderer) sources(s *sample.Sample) {
	var parts []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			parts = append(parts, p)
		}
	}
	for _, j := range s.Jobs {
		add(r.t("sources.rss", j.Totals.Sources["rss"]))
		if v := j.Totals.Sources["pss"]; v != "" {
			add(r.t("sources.pss", v))
		}
		if v := j.Totals.Sources["gpu"]; v != "" {
			add(r.t("sources.gpu", v))
		}
	}
	if len(parts) == 0 {
		return
	}
	if r.o.Extra != nil {
		add(r.t("sources.shm"))
	}
	r.line(r.st.dim, r.t("sources", strings.Join(parts, " · ")))
}

func (r *renderer) gpus(s *sample.Sample) {
	if s.GPU.Error != "" {
		r.line(r.st.warn, r.t("gpu.error", s.GPU.Error))
	}
	if len(s.GPU.Devices) == 0 {
		return
	}
	cols := []column{{"", 3, false}, {"", 16, false}, {"", 7, true}, {"", 8, true}, {"", 7, true}, {"", 0, false}}
	if r.wide {
		cols = append(cols[:5:5], column{"", barWidth + 2, false}, column{"", 0, false})
	}
	head := []string{"GPU", r.t("gpu.name"), r.t("gpu.used"), r.t("gpu.reserved"), r.t("gpu.total")}
	if r.wide {
		head = append(head, "")
	}
	r.line(r.st.header, row(cols, append(head, r.t("gpu.users"))))
	for _, d := range s.GPU.Devices {
		var users []string
		for _, p := range s.GPU.Processes {
			if p.GPUIndex != d.Index {
				continue
			}
			id := strconv.Itoa(p.PID)
			if p.Unmapped {
				id = "host" + strconv.Itoa(p.HostPID)
			}
			users = append(users, id+":"+size64(p.UsedBytes))
		}
		cells := []string{strconv.Itoa(d.Index), strings.TrimPrefix(d.Name, "NVIDIA "),
			units.Short(d.UsedBytes), size64(d.ReservedBytes), units.Short(d.TotalBytes)}
		if r.wide {
			cells = append(cells, Bar(d.UsedBytes, d.TotalBytes, barWidth))
		}
		r.plainLine(row(cols, append(cells, strings.Join(users, " "))))
	}
}
