package cli

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"golang.org/x/text/language"

	"github.com/torchmem/torchmem/internal/cluster"
	"github.com/torchmem/torchmem/internal/i18n"
	"github.com/torchmem/torchmem/internal/termsafe"
	"github.com/torchmem/torchmem/internal/units"
)

// clusterLines renders a cluster summary as lines of at most width
// columns: a line per node, then the GPUs, the jobs and the OOMs of the
// window. Every label value came from an agent through Prometheus, so it
// goes through termsafe before a terminal sees it.
func clusterLines(s *cluster.Summary, lang language.Tag, width int) []string {
	t := clusterCat.T(lang)
	window := model.Duration(time.Duration(s.WindowSeconds * float64(time.Second))).String()
	out := []string{t("title", termsafe.Line(s.Prometheus), s.Time.Format("2006-01-02 15:04:05 MST"))}
	for _, w := range s.Warnings {
		out = append(out, t("warning", termsafe.Line(w)))
	}
	if len(s.Nodes) == 0 {
		return cutLines(append(out, t("none", window)), width)
	}
	down, jobs, gpus := 0, 0, 0
	for _, n := range s.Nodes {
		if !n.Up {
			down++
		}
		jobs, gpus = jobs+len(n.Jobs), gpus+len(n.GPUs)
	}
	out = append(out, t("summary", len(s.Nodes), down, jobs, gpus, window), "")
	out = append(out, nodeTable(s, t).lines(width)...)
	if gpus > 0 {
		out = append(out, "", t("s.gpus"))
		out = append(out, gpuTable(s, t).lines(width)...)
	}
	if jobs > 0 {
		out = append(out, "", t("s.jobs"))
		out = append(out, jobTable(s, t).lines(width)...)
	}
	if o := oomLines(s, t); len(o) > 0 {
		out = append(out, "", t("s.ooms"))
		out = append(out, o...)
	}
	return cutLines(out, width)
}

func nodeTable(s *cluster.Summary, t func(string, ...any) string) table {
	tb := table{right: []bool{false, false, true, true, true, true, true}}
	tb.add(t("h.node"), t("h.state"), t("h.gpus"), t("h.gpumem"), t("h.hostavail"), t("h.jobs"), t("h.ooms"))
	for _, n := range s.Nodes {
		if !n.Up {
			tb.add(termsafe.Line(n.Name), t("downseen", lastSeen(n, s.Time, t)), "-", "-", "-", "-", strconv.Itoa(n.OOMs.Total()))
			continue
		}
		var used, total float64
		for _, g := range n.GPUs {
			used, total = used+deref(g.UsedBytes), total+deref(g.TotalBytes)
		}
		gpuMem := "-"
		if len(n.GPUs) > 0 {
			gpuMem = short(&used) + "/" + short(&total)
		}
		host := "-"
		if n.MemAvailableBytes != nil {
			host = short(n.MemAvailableBytes) + "/" + short(n.MemTotalBytes)
		}
		tb.add(termsafe.Line(n.Name), t("up"), strconv.Itoa(len(n.GPUs)), gpuMem, host, strconv.Itoa(len(n.Jobs)), strconv.Itoa(n.OOMs.Total()))
	}
	return tb
}

func lastSeen(n cluster.Node, now time.Time, t func(string, ...any) string) string {
	if n.LastSeen == nil {
		return t("neverseen")
	}
	ago := now.Sub(*n.LastSeen).Round(time.Second)
	return t("seen", n.LastSeen.Local().Format("15:04:05"), ago)
}

func gpuTable(s *cluster.Summary, t func(string, ...any) string) table {
	tb := table{right: []bool{false, true, false, true, true}}
	tb.add(t("h.node"), t("h.gpu"), t("h.model"), t("h.used"), t("h.total"))
	for _, n := range s.Nodes {
		for _, g := range n.GPUs {
			tb.add(termsafe.Line(n.Name), termsafe.Line(g.Index), termsafe.Line(g.Model), short(g.UsedBytes), short(g.TotalBytes))
		}
	}
	return tb
}

func jobTable(s *cluster.Summary, t func(string, ...any) string) table {
	tb := table{right: []bool{false, false, false, true, true, true, true, true, true, false}}
	tb.add(t("h.node"), t("h.job"), t("h.workload"), t("h.procs"), t("h.rss"), t("h.pss"), t("h.gpujob"), t("h.cgroup"), t("h.ooms"), t("h.command"))
	for _, n := range s.Nodes {
		for _, j := range n.Jobs {
			cg := short(j.CgroupUsageBytes)
			if j.CgroupLimitBytes != nil {
				cg += "/" + short(j.CgroupLimitBytes)
			}
			procs := "-"
			if j.Processes != nil {
				procs = strconv.Itoa(int(*j.Processes))
			}
			tb.add(termsafe.Line(n.Name), termsafe.Line(j.ID), termsafe.Line(workloadText(j.Workload)), procs,
				short(j.RSSBytes), short(j.PSSBytes), short(j.GPUBytes), cg, strconv.Itoa(j.OOMKills+j.CUDAOOMs), termsafe.Line(j.Command))
		}
	}
	return tb
}

// oomLines says what each node's OOM count is made of.
func oomLines(s *cluster.Summary, t func(string, ...any) string) []string {
	var out []string
	for _, n := range s.Nodes {
		var parts []string
		if n.OOMs.HostKills > 0 {
			parts = append(parts, t("oom.host", n.OOMs.HostKills))
		}
		for _, k := range sortedKeys(n.OOMs.Incidents) {
			parts = append(parts, t("oom.incident", n.OOMs.Incidents[k], termsafe.Line(k)))
		}
		for _, k := range sortedKeys(n.OOMs.JobKills) {
			parts = append(parts, t("oom.job", n.OOMs.JobKills[k], termsafe.Line(k)))
		}
		for _, k := range sortedKeys(n.OOMs.CUDA) {
			parts = append(parts, t("oom.cuda", n.OOMs.CUDA[k], termsafe.Line(k)))
		}
		if len(parts) > 0 {
			out = append(out, termsafe.Line(n.Name)+": "+strings.Join(parts, "; "))
		}
	}
	return out
}

// workloadText says who a job belongs to from the identity labels an
// agent puts on torchmem_job_info (docs/serve.md, "Workload identity"),
// spelled as identity.Short spells it on the node: "ns/pod/container",
// "slurm 1234.0 (alice)", "docker 3f2a…", a systemd unit; "-" for none
// (a plain process, or an agent from before those labels).
func workloadText(w map[string]string) string {
	switch {
	case w["pod"] != "":
		return joinSet("/", w["namespace"], w["pod"], w["container"])
	case w["pod_uid"] != "":
		return "pod " + w["pod_uid"]
	case w["slurm_job_id"] != "":
		s := "slurm " + joinSet(".", w["slurm_job_id"], w["slurm_step"])
		if u := w["slurm_user"]; u != "" {
			s += " (" + u + ")"
		}
		return s
	case w["container_id"] != "":
		return joinSet(" ", cmp.Or(w["runtime"], "container"), i18n.Cut(w["container_id"], 13))
	case w["unit"] != "":
		return w["unit"]
	}
	return "-"
}

// joinSet joins the non-empty parts.
func joinSet(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func short(p *float64) string {
	if p == nil {
		return "-"
	}
	return units.Short(int64(*p))
}

func cutLines(lines []string, width int) []string {
	for i, l := range lines {
		lines[i] = i18n.Cut(l, width)
	}
	return lines
}

// table aligns columns by display width (a CJK heading or node name
// takes two columns a character); right marks the numeric columns.
type table struct {
	rows  [][]string
	right []bool
}

func (tb *table) add(cells ...string) { tb.rows = append(tb.rows, cells) }

func (tb table) lines(width int) []string {
	widths := make([]int, len(tb.right))
	for _, r := range tb.rows {
		for i, c := range r {
			widths[i] = max(widths[i], i18n.Width(c))
		}
	}
	out := make([]string, 0, len(tb.rows))
	for _, r := range tb.rows {
		var b strings.Builder
		for i, c := range r {
			if i > 0 {
				b.WriteString("  ")
			}
			switch {
			case tb.right[i]:
				b.WriteString(i18n.PadLeft(c, widths[i]))
			case i == len(r)-1:
				b.WriteString(c)
			default:
				b.WriteString(i18n.PadRight(c, widths[i]))
			}
		}
		out = append(out, i18n.Cut(b.String(), width))
	}
	return out
}
