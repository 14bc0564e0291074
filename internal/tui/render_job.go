package tui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/torchmem/torchmem/internal/jobs"
	"github.com/torchmem/torchmem/internal/sample"
	"github.com/torchmem/torchmem/internal/units"
)

// procFormat lays out a process row: 52 columns of figures, the command
// line in what is left of the width.
const procFormat = "%-9s %-6s %6s %6s %6s %6s %5s  %s"

func (r *renderer) job(j sample.Job) {
	t := j.Totals
	r.line(r.st.title, fmt.Sprintf("JOB %d  %s  %s", j.RootPID, counts(t), j.Command))
	r.cgroupLine(j)
	r.line(r.st.header, fmt.Sprintf(procFormat, "PID", "ROLE", "GPU", "RSS", "PSS", "USS", "SWAP", "COMMAND"))
	roots := treeOf(j.Processes)
	sortNodes(roots, r.o.Sort)
	for _, n := range roots {
		r.node(n)
	}
	gpu := "-"
	if t.Sources["gpu"] != "" {
		gpu = units.Short(t.GPUBytes)
	}
	pss, uss := units.Short(int64(t.PSSBytes)), units.Short(int64(t.USSBytes))
	if !t.PSSComplete {
		pss, uss = pss+"+", uss+"+"
	}
	age := ""
	if t.Sources["pss"] != "" {
		age = fmt.Sprintf("PSS %.0fs old", t.PSSMaxAgeSeconds)
	}
	r.line(r.st.title, fmt.Sprintf(procFormat, "total", "", gpu, units.Short(int64(t.RSSBytes)), pss, uss,
		units.Short(int64(t.SwapBytes)), age))
	r.line(r.st.dim, "  sources: "+r.sources(t))
}

// sources says where the totals came from.
func (r *renderer) sources(t jobs.Totals) string {
	parts := []string{"rss/swap " + t.Sources["rss"]}
	if s := t.Sources["pss"]; s != "" {
		parts = append(parts, "pss/uss "+s)
	}
	if s := t.Sources["gpu"]; s != "" {
		parts = append(parts, "gpu "+s)
	}
	return strings.Join(parts, " · ")
}

func (r *renderer) cgroupLine(j sample.Job) {
	c := j.Cgroup
	if c == nil {
		return
	}
	figs := fmt.Sprintf("  used %s, no limit", units.Short(int64(c.UsageBytes)))
	if !c.Max.Unlimited {
		figs = fmt.Sprintf("  used %s of %s", units.Short(int64(c.UsageBytes)), units.Short(int64(c.Max.Bytes)))
	}
	st := r.st.dim
	if j.CgroupHeadroomBytes != nil {
		figs += " (" + units.Short(int64(*j.CgroupHeadroomBytes)) + " left)"
		if c.Max.Bytes > 0 && *j.CgroupHeadroomBytes < c.Max.Bytes/10 {
			st = r.st.warn
		}
	}
	if c.High != nil && !c.High.Unlimited {
		figs += "  high " + units.Short(int64(c.High.Bytes))
	}
	if p := c.Pressure; p != nil && p.Some != nil {
		figs += fmt.Sprintf("  PSI %.2f%%", p.Some.Avg10)
	}
	if k := c.Events.OOMKill; k != nil && *k > 0 {
		figs += fmt.Sprintf("  oom_kill %d", *k)
		st = r.st.warn
	}
	head := fmt.Sprintf("  cgroup v%d ", c.Version)
	r.line(st, head+shortenLeft(c.Path, r.o.Width-len([]rune(head))-len([]rune(figs)))+figs)
}

// shortenLeft keeps the end of a path (the job's own group) within n
// columns, at least 12.
func shortenLeft(p string, n int) string {
	n = max(n, 12)
	if rs := []rune(p); len(rs) > n {
		return "…" + string(rs[len(rs)-n+1:])
	}
	return p
}

// node prints a process and its children, folding a long run of workers.
func (r *renderer) node(n *node) {
	r.proc(n.p)
	var workers []*node
	for _, c := range n.children {
		if c.p.Role == jobs.RoleWorker && len(c.children) == 0 {
			workers = append(workers, c)
		}
	}
	fold := !r.o.Expand && len(workers) > FoldAbove
	for _, c := range n.children {
		if fold && c.p.Role == jobs.RoleWorker && len(c.children) == 0 {
			continue
		}
		r.node(c)
	}
	if fold {
		r.folded(workers)
	}
}

func (r *renderer) proc(p jobs.Process) {
	pid := strings.Repeat(" ", min(p.Depth, 3)) + strconv.Itoa(p.PID)
	cmd := jobs.CommandLine(p.Cmdline, p.Name)
	if p.Role == jobs.RoleWorker && p.Depth > 0 {
		cmd = "(worker) " + p.Name
	}
	r.line(r.st.title.UnsetBold(), fmt.Sprintf(procFormat, pid, p.Role, size64(p.GPUBytes), size(p.RSSBytes),
		size(p.PSSBytes), size(p.USSBytes), size(p.SwapBytes), cmd))
}

// folded prints one row summing a parent's leaf workers.
func (r *renderer) folded(ws []*node) {
	var sum jobs.Job
	for _, w := range ws {
		sum.Processes = append(sum.Processes, w.p)
	}
	sum.Total("")
	t := sum.Totals
	pss, uss := units.Short(int64(t.PSSBytes)), units.Short(int64(t.USSBytes))
	if !t.PSSComplete {
		pss, uss = "-", "-"
	}
	label := fmt.Sprintf(" +%d", len(ws))
	r.line(r.st.dim, fmt.Sprintf(procFormat, label, "worker", "-", units.Short(int64(t.RSSBytes)), pss, uss,
		units.Short(int64(t.SwapBytes)), fmt.Sprintf("%d workers folded (e)", len(ws))))
}

func counts(t jobs.Totals) string {
	s := plural(t.Processes, "proc")
	if t.Workers > 0 {
		s += " (" + plural(t.Workers, "worker") + ")"
	}
	return s
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
