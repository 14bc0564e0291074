package tui

import (
	"strconv"
	"strings"

	"github.com/torchmem/torchmem/internal/i18n"
	"github.com/torchmem/torchmem/internal/jobs"
	"github.com/torchmem/torchmem/internal/sample"
	"github.com/torchmem/torchmem/internal/units"
)

// jobTable is top's block of each job alone (run --tui's table of the
// supervised job): its title, columns, process rows (folded as o says,
// selectable) and total, without top's header. barLimit is what memory
// bars are drawn against when a job has no cgroup limit of its own.
func jobTable(js []sample.Job, barLimit int64, o ViewOptions) rendered {
	r := newRenderer(o)
	r.hostTotal = barLimit
	for _, j := range orderJobs(js, r.o.Sort, "", r.o.Reverse) {
		r.job(j)
	}
	return rendered{lines: r.lines, rows: r.rows}
}

func (r *renderer) job(j sample.Job) {
	t := j.Totals
	var je JobExtra
	if r.o.Extra != nil {
		je = r.o.Extra.Jobs[j.ID]
	}
	parts := []string{r.t("job.title", strconv.Itoa(j.RootPID), r.counts(t))}
	if j.Identity != nil {
		// Whose job it is (pod, Slurm step, container) comes before its
		// figures: on a shared node it is the first question.
		if who := j.Identity.Short(); who != "" {
			parts = append(parts, r.t("job.identity", who))
		}
	}
	if je.ShmBytes != nil {
		parts = append(parts, r.t("job.shm", units.Short(int64(*je.ShmBytes))))
	}
	if r.wide && len(je.History) > 0 {
		parts = append(parts, r.t("job.history", sparkline(je.History)))
	}
	r.line(r.st.title, join(append(parts, j.Command)...))
	r.whoLine(j)
	r.cgroupLine(j)
	r.tableHeader()
	limit := r.memLimit(j)
	roots := treeOf(j.Processes)
	sortNodes(roots, r.o.Sort, r.o.Reverse)
	for _, n := range roots {
		r.node(n, limit)
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
		age = r.t("total.pssage", strconv.FormatFloat(t.PSSMaxAgeSeconds, 'f', 0, 64))
	}
	cells := []string{r.label("total.label"), "", gpu, units.Short(int64(t.RSSBytes)), pss, uss, units.Short(int64(t.SwapBytes)), age}
	if r.wide {
		cells = []string{r.t("total.label"), "", "", r.cpuSum(j.Processes), gpu, units.Short(int64(t.RSSBytes)), pss, uss,
			units.Short(int64(t.SwapBytes)), "", age}
	}
	r.line(r.st.title, row(r.cols, cells))
}

// tableHeader names the columns; the sort key's carries its direction.
func (r *renderer) tableHeader() {
	cells := make([]string, len(r.cols))
	for i, c := range r.cols {
		cells[i] = r.label(c.id)
		if c.id == "col."+r.o.Sort {
			cells[i] = r.sortLabel()
		}
	}
	r.line(r.st.header, row(r.cols, cells))
}

// memLimit is what a process's memory bar is drawn against: the job's
// cgroup limit, or the host's memory when the cgroup has none.
func (r *renderer) memLimit(j sample.Job) int64 {
	if c := j.Cgroup; c != nil && !c.Max.Unlimited && c.Max.Bytes > 0 {
		return int64(c.Max.Bytes)
	}
	return r.hostTotal
}

func (r *renderer) cgroupLine(j sample.Job) {
	c := j.Cgroup
	if c == nil {
		return
	}
	figs := r.t("cgroup.nolimit", units.Short(int64(c.UsageBytes)))
	if !c.Max.Unlimited {
		figs = r.t("cgroup.of", units.Short(int64(c.UsageBytes)), units.Short(int64(c.Max.Bytes)))
	}
	st := r.st.dim
	if j.CgroupHeadroomBytes != nil {
		figs += " " + r.t("cgroup.left", units.Short(int64(*j.CgroupHeadroomBytes)))
		if c.Max.Bytes > 0 && *j.CgroupHeadroomBytes < c.Max.Bytes/10 {
			st = r.st.warn
		}
	}
	extra := []string{figs}
	if r.wide && !c.Max.Unlimited && c.Max.Bytes > 0 {
		extra = []string{Bar(int64(c.UsageBytes), int64(c.Max.Bytes), barWidth), figs}
	}
	if c.High != nil && !c.High.Unlimited {
		extra = append(extra, r.t("cgroup.high", units.Short(int64(c.High.Bytes))))
	}
	if p := c.Pressure; p != nil && p.Some != nil {
		extra = append(extra, r.t("cgroup.psi", pct2(p.Some.Avg10)))
	}
	if k := c.Events.OOMKill; k != nil && *k > 0 {
		extra = append(extra, r.t("cgroup.oomkill", strconv.FormatUint(*k, 10)))
		st = r.st.warn
	}
	head := "  " + r.t("cgroup.head", strconv.Itoa(c.Version)) + " "
	tail := "  " + join(extra...)
	r.line(st, head+shortenLeft(c.Path, r.o.Width-i18n.Width(head)-i18n.Width(tail))+tail)
}

// shortenLeft keeps the end of a path (the job's own group) within n
// display columns, at least 12, behind "…".
func shortenLeft(p string, n int) string {
	n = max(n, 12)
	if i18n.Width(p) <= n {
		return p
	}
	rs := []rune(p)
	i, w := len(rs), 1 // the ellipsis
	for i > 0 && w+i18n.Width(string(rs[i-1])) <= n {
		i--
		w += i18n.Width(string(rs[i]))
	}
	return "…" + string(rs[i:])
}

// leafWorkers are a node's children that are workers without children
// of their own: what folding sums into one row.
func leafWorkers(n *node) []*node {
	var ws []*node
	for _, c := range n.children {
		if c.p.Role == jobs.RoleWorker && len(c.children) == 0 {
			ws = append(ws, c)
		}
	}
	return ws
}

// node prints a process and its children. A parent's leaf workers, one
// or more, are folded into one row unless Expand; its own row is marked
// ▸ (folded) or ▾ (listed) so that e always shows what it did.
func (r *renderer) node(n *node, limit int64) {
	workers := leafWorkers(n)
	mark := " "
	if len(workers) > 0 {
		mark = "▾"
		if !r.o.Expand {
			mark = "▸"
		}
	}
	r.proc(n.p, mark, limit)
	for _, c := range n.children {
		if !r.o.Expand && c.p.Role == jobs.RoleWorker && len(c.children) == 0 {
			continue
		}
		r.node(c, limit)
	}
	if !r.o.Expand && len(workers) > 0 {
		r.folded(workers, n.p.Depth+1)
	}
}

func (r *renderer) role(role string) string {
	switch role {
	case jobs.RoleMain, jobs.RoleWorker, jobs.RoleChild:
		return r.label("role." + role)
	}
	return role
}

func (r *renderer) proc(p jobs.Process, mark string, limit int64) {
	sel := " "
	if p.PID == r.o.Selected {
		sel = ">"
	}
	pid := sel + strings.Repeat(" ", min(p.Depth, 2)) + mark + strconv.Itoa(p.PID)
	cmd := jobs.CommandLine(p.Cmdline, p.Name)
	if p.Role == jobs.RoleWorker && p.Depth > 0 {
		cmd = r.t("proc.worker", p.Name)
	}
	cells := []string{pid, r.role(p.Role), size64(p.GPUBytes), size(p.RSSBytes), size(p.PSSBytes), size(p.USSBytes), size(p.SwapBytes), cmd}
	if r.wide {
		state, cpu := "", "-"
		if r.o.Extra != nil {
			if pe, ok := r.o.Extra.Procs[p.PID]; ok {
				state = pe.State
				if pe.CPUPercent != nil {
					cpu = percent(*pe.CPUPercent)
				}
			}
		}
		cells = []string{pid, r.role(p.Role), state, cpu, size64(p.GPUBytes), size(p.RSSBytes), size(p.PSSBytes),
			size(p.USSBytes), size(p.SwapBytes), r.memBar(p, limit), cmd}
	}
	r.rows = append(r.rows, procRow{line: len(r.lines), pid: p.PID, cmd: jobs.CommandLine(p.Cmdline, p.Name)})
	if p.PID == r.o.Selected {
		r.line(r.st.selected, row(r.cols, cells))
		return
	}
	r.plainLine(row(r.cols, cells))
}

// memBar draws a process's PSS (its RSS until PSS is read) against limit.
func (r *renderer) memBar(p jobs.Process, limit int64) string {
	v := p.PSSBytes
	if v == nil {
		v = p.RSSBytes
	}
	if v == nil || limit <= 0 {
		return ""
	}
	return Bar(int64(*v), limit, barWidth)
}

func percent(v float64) string {
	if v >= 999.5 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// cpuSum is the job's CPU% (the sum over its processes), "-" before the
// second sample.
func (r *renderer) cpuSum(ps []jobs.Process) string {
	if r.o.Extra == nil {
		return "-"
	}
	sum, any := 0.0, false
	for _, p := range ps {
		if pe, ok := r.o.Extra.Procs[p.PID]; ok && pe.CPUPercent != nil {
			sum, any = sum+*pe.CPUPercent, true
		}
	}
	if !any {
		return "-"
	}
	return percent(sum)
}

// folded prints one row summing a parent's leaf workers.
func (r *renderer) folded(ws []*node, depth int) {
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
	label := " " + strings.Repeat(" ", min(depth, 2)) + "+" + strconv.Itoa(len(ws))
	what := r.t("fold.row", strconv.Itoa(len(ws)))
	if len(ws) == 1 {
		what = r.t("fold.row1")
	}
	cells := []string{label, r.role(jobs.RoleWorker), "-", units.Short(int64(t.RSSBytes)), pss, uss, units.Short(int64(t.SwapBytes)), what}
	if r.wide {
		cells = []string{label, r.role(jobs.RoleWorker), "", r.cpuSum(sum.Processes), "-", units.Short(int64(t.RSSBytes)), pss, uss,
			units.Short(int64(t.SwapBytes)), "", what}
	}
	r.line(r.st.dim, row(r.cols, cells))
}

func (r *renderer) counts(t jobs.Totals) string {
	s := r.t("job.procs", strconv.Itoa(t.Processes))
	if t.Processes == 1 {
		s = r.t("job.proc1")
	}
	switch {
	case t.Workers == 1:
		s += r.t("job.worker1")
	case t.Workers > 1:
		s += r.t("job.workers", strconv.Itoa(t.Workers))
	}
	return s
}

// sparkBlocks are the eight heights of a sparkline.
var sparkBlocks = []rune("▁▂▃▄▅▆▇█")

// sparkMinRange: a sparkline spans at least a tenth of its largest value,
// so that a job whose RSS wobbles by a few pages draws flat instead of
// swinging from the lowest block to the highest.
const sparkMinRange = 10

// sparkline draws vs (oldest first) one block each, from the lowest
// value to the highest.
func sparkline(vs []uint64) string {
	lo, hi := vs[0], vs[0]
	for _, v := range vs {
		lo, hi = min(lo, v), max(hi, v)
	}
	span := max(hi-lo, hi/sparkMinRange, 1)
	var b strings.Builder
	for _, v := range vs {
		i := int(float64(v-lo) / float64(span) * float64(len(sparkBlocks)-1))
		b.WriteRune(sparkBlocks[min(max(i, 0), len(sparkBlocks)-1)])
	}
	return b.String()
}
