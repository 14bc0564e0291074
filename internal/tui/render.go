package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/torchmem/torchmem/internal/sample"
	"github.com/torchmem/torchmem/internal/termsafe"
	"github.com/torchmem/torchmem/internal/textwrap"
	"github.com/torchmem/torchmem/internal/units"
)

// ViewOptions says how to render a Sample.
type ViewOptions struct {
	Sort   string // one of SortKeys; "pss" when empty
	Filter string
	// Expand lists every DataLoader worker; otherwise a parent's workers
	// beyond FoldAbove are folded into one summed row.
	Expand bool
	Width  int  // 80 when zero
	Color  bool // false: plain text, no escape sequences (NO_COLOR, --once)
	// Interval is shown in the header of the live view; zero hides it.
	Interval time.Duration
}

// FoldAbove is how many workers of one parent are listed before folding.
const FoldAbove = 4

type styles struct {
	title, header, warn, dim, notice lipgloss.Style
}

func newStyles(color bool) styles {
	if !color {
		p := lipgloss.NewStyle()
		return styles{p, p, p, p, p}
	}
	return styles{
		title:  lipgloss.NewStyle().Bold(true),
		header: lipgloss.NewStyle().Bold(true).Underline(true),
		warn:   lipgloss.NewStyle().Foreground(lipgloss.Color("9")).Bold(true),
		dim:    lipgloss.NewStyle().Faint(true),
		notice: lipgloss.NewStyle().Foreground(lipgloss.Color("11")),
	}
}

// Render returns the whole view of s as lines of at most o.Width columns.
func Render(s *sample.Sample, o ViewOptions) []string {
	if o.Width <= 0 {
		o.Width = 80
	}
	if o.Sort == "" {
		o.Sort = "pss"
	}
	r := &renderer{o: o, st: newStyles(o.Color)}
	r.header(s)
	r.gpus(s)
	for _, n := range s.Notices {
		r.wrapped(r.st.notice, "! ", n)
	}
	js := orderJobs(s.Jobs, o.Sort, o.Filter)
	if len(js) == 0 {
		r.line(r.st.dim, "no PyTorch or GPU jobs"+filterNote(o.Filter))
	}
	for _, j := range js {
		r.job(j)
	}
	return r.lines
}

func filterNote(f string) string {
	if f == "" {
		return ""
	}
	return " matching " + strconv.Quote(f)
}

type renderer struct {
	o     ViewOptions
	st    styles
	lines []string
}

// line cuts text to the width before styling, so escapes never get cut.
// The text holds processes' command lines and names: their control
// characters are escaped (termsafe) so that only the styles' own reach
// the terminal.
func (r *renderer) line(st lipgloss.Style, text string) {
	r.lines = append(r.lines, st.Render(textwrap.Cut(termsafe.Line(text), r.o.Width)))
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

func (r *renderer) header(s *sample.Sample) {
	t := fmt.Sprintf("torchmem top  %s  sort %s", s.Time.Format("15:04:05"), r.o.Sort)
	if r.o.Interval > 0 {
		t += "  every " + r.o.Interval.String()
	}
	if r.o.Filter != "" {
		t += "  filter " + strconv.Quote(r.o.Filter)
	}
	r.line(r.st.title, t)
	m := s.Host.Meminfo
	h := "host"
	if m.MemAvailableBytes != nil && m.MemTotalBytes != nil {
		h += fmt.Sprintf("  avail %s of %s", size(m.MemAvailableBytes), size(m.MemTotalBytes))
	}
	if m.SwapTotalBytes != nil && *m.SwapTotalBytes > 0 && m.SwapFreeBytes != nil {
		used := *m.SwapTotalBytes - *m.SwapFreeBytes
		h += fmt.Sprintf("  swap %s/%s", size(&used), size(m.SwapTotalBytes))
	} else {
		h += "  no swap"
	}
	if p := s.Host.PSI; p != nil && p.Some != nil {
		h += fmt.Sprintf("  PSI some %.2f%%", p.Some.Avg10)
		if p.Full != nil {
			h += fmt.Sprintf(" full %.2f%%", p.Full.Avg10)
		}
	}
	h += "  cgroup " + s.Host.CgroupMode
	st := r.st.dim
	if p := s.Host.PSI; p != nil && p.Some != nil && p.Some.Avg10 >= 10 {
		st = r.st.warn
	}
	r.line(st, h)
}

func (r *renderer) gpus(s *sample.Sample) {
	if s.GPU.Error != "" {
		r.line(r.st.warn, "GPU error: "+s.GPU.Error)
	}
	if len(s.GPU.Devices) == 0 {
		return
	}
	r.line(r.st.header, fmt.Sprintf("%-3s %-16s %7s %8s %7s  %s", "GPU", "NAME", "USED", "RESERVED", "TOTAL", "USERS (pid:memory)"))
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
		name := strings.TrimPrefix(d.Name, "NVIDIA ")
		if len(name) > 16 {
			name = name[:16]
		}
		r.line(lipgloss.NewStyle(), fmt.Sprintf("%-3d %-16s %7s %8s %7s  %s", d.Index, name,
			units.Short(d.UsedBytes), size64(d.ReservedBytes), units.Short(d.TotalBytes), strings.Join(users, " ")))
	}
}
