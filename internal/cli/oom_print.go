package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/torchmem/torchmem/internal/i18n"
	"github.com/torchmem/torchmem/internal/oomexplain"
	"github.com/torchmem/torchmem/internal/termsafe"
	"github.com/torchmem/torchmem/internal/units"
)

// oomReport is the documented --json shape (docs/oom.md). Truncated and
// Dropped say incidents past the cap were not kept.
type oomReport struct {
	Incidents []oomexplain.Incident `json:"incidents"`
	Truncated bool                  `json:"truncated"`
	Dropped   int                   `json:"dropped,omitempty"`
}

func oomPrint(w io.Writer, t translate, rep oomReport, asJSON bool, args []string) error {
	if rep.Incidents == nil {
		rep.Incidents = []oomexplain.Incident{}
	}
	incs := rep.Incidents
	if asJSON {
		return writeJSON(w, rep)
	}
	if len(incs) == 0 {
		where := t("oom.where.kernel_log")
		if len(args) > 0 {
			where = strings.Join(args, ", ")
		}
		_, err := fmt.Fprintln(w, t("oom.none", termsafe.Line(where)))
		return err
	}
	for i, inc := range incs {
		if err := oomPrintOne(w, t, inc, i+1, false); err != nil {
			return err
		}
	}
	return nil
}

// oomPrintOne prints one incident block, or with asJSON one incident as a
// single line of JSON (--follow --json is a stream: one object per line,
// so it is not indented like writeJSON's documents).
func oomPrintOne(w io.Writer, t translate, inc oomexplain.Incident, n int, asJSON bool) error {
	if asJSON {
		b, err := json.Marshal(inc)
		if err != nil {
			return fmt.Errorf("encode json: %w", err)
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "[%d] %s\n", n, termsafe.Line(oomTitle(t, &inc)))
	w8 := oomLabelWidth(t)
	oomField(&sb, w8, t("oom.label.when"), oomWhen(t, &inc))
	if e := inc.Explanation; e != nil {
		oomField(&sb, w8, t("oom.label.verdict"), oomVerdictText(t, e))
		for i, a := range e.Arithmetic {
			oomField(&sb, w8, map[bool]string{true: t("oom.label.numbers"), false: ""}[i == 0], a)
		}
		for i, a := range e.Advice {
			oomField(&sb, w8, map[bool]string{true: t("oom.label.do"), false: ""}[i == 0], "- "+a.Text)
			if a.Because != "" {
				oomField(&sb, w8, "", "  "+t("oom.because", a.Because))
			}
		}
	}
	sb.WriteString("\n")
	_, err := io.WriteString(w, sb.String())
	return err
}

// oomVerdictText is the verdict, the alternatives the evidence cannot
// rule out, and the summary.
func oomVerdictText(t translate, e *oomexplain.Explanation) string {
	v := string(e.Verdict)
	if len(e.Alternatives) > 0 {
		alts := make([]string, len(e.Alternatives))
		for i, a := range e.Alternatives {
			alts[i] = string(a)
		}
		v = t("oom.verdict.or", v, strings.Join(alts, ", "))
	}
	return t("oom.verdict", v, e.Summary)
}

// oomLabelWidth is the label column's width in display columns: 8 as
// before in English, the widest label in another language (CJK labels
// are two columns a character).
func oomLabelWidth(t translate) int {
	w := 8
	for _, id := range []string{"oom.label.when", "oom.label.verdict", "oom.label.numbers", "oom.label.do"} {
		w = max(w, i18n.Width(t(id)))
	}
	return w
}

// oomField prints one line of an incident; the value holds what the log
// said (process names, cgroup paths, file names), escaped for the terminal.
func oomField(sb *strings.Builder, width int, name, value string) {
	fmt.Fprintf(sb, "    %s %s\n", i18n.PadRight(name, width), termsafe.Line(value))
}

func oomWhen(t translate, inc *oomexplain.Incident) string {
	var parts []string
	if inc.Time != nil {
		parts = append(parts, inc.Time.Local().Format("2006-01-02 15:04:05 MST"))
	}
	if inc.UptimeSeconds != nil {
		parts = append(parts, t("oom.when.uptime", fmt.Sprintf("%.6f", *inc.UptimeSeconds)))
	}
	where := inc.Source
	if inc.Line > 0 && !oomLiveSource(inc.Source) {
		where = t("oom.when.line", inc.Source, inc.Line)
	}
	parts = append(parts, where)
	if inc.Host != "" {
		parts = append(parts, t("oom.when.host", inc.Host))
	}
	if inc.Count > 1 {
		parts = append(parts, t("oom.when.count", inc.Count))
	}
	return strings.Join(parts, " · ")
}

func oomTitle(t translate, inc *oomexplain.Incident) string {
	rank := ""
	if inc.Rank != nil {
		rank = t("oom.title.rank", *inc.Rank)
	}
	switch {
	case inc.Kernel != nil:
		return oomKernelTitle(t, inc.Kernel, inc.Explanation)
	case inc.CUDA != nil:
		return oomCUDATitle(t, inc) + rank
	}
	pids := ""
	if len(inc.PIDs) > 0 {
		pids = t("oom.title.pids", strings.ReplaceAll(strings.Trim(fmt.Sprint(inc.PIDs), "[]"), " ", ", "))
	}
	return t("oom.title."+string(inc.Kind)) + pids + rank
}

// oomKernelTitle names the victim and where the memory ran out, as the
// explanation decided (the title never claims more than the verdict).
func oomKernelTitle(t translate, k *oomexplain.KernelOOM, e *oomexplain.Explanation) string {
	s := t("oom.title.kernel")
	if v := k.Victim; v != nil {
		s += t("oom.title.victim", v.Comm, v.PID)
	} else if sel := k.Selected; sel != nil {
		s += t("oom.title.selected", sel.Comm, sel.PID)
	}
	if e == nil || len(e.Alternatives) > 0 {
		return s
	}
	switch e.Verdict {
	case oomexplain.VerdictCgroupLimit:
		if k.OOMMemcg != "" {
			return s + t("oom.title.in_memcg", k.OOMMemcg)
		}
		return s + t("oom.title.in_a_memcg")
	case oomexplain.VerdictCpusetExhausted:
		return s + t("oom.title.nodes", k.MemsAllowed)
	case oomexplain.VerdictHostExhausted:
		return s + t("oom.title.host")
	}
	return s
}

func oomCUDATitle(t translate, inc *oomexplain.Incident) string {
	c := inc.CUDA
	gpu := ""
	if c.Device != nil {
		gpu = t("oom.title.on_gpu", *c.Device)
	}
	switch inc.Kind {
	case oomexplain.KindCUDAError:
		return "CUDA error: out of memory"
	case oomexplain.KindCUBLASAlloc:
		return "cuBLAS workspace allocation failed (CUBLAS_STATUS_ALLOC_FAILED)"
	case oomexplain.KindNCCLOOM:
		return "NCCL: CUDA out of memory"
	}
	s := "CUDA out of memory" + gpu
	if c.RequestedBytes != nil {
		s += t("oom.title.tried", units.Bytes(*c.RequestedBytes))
	}
	if c.Format == "cudaMallocAsync" {
		s += " (cudaMallocAsync)"
	}
	return s
}

// oomLiveSource: a kernel log read live has no line numbers worth showing.
func oomLiveSource(src string) bool {
	return src == "/dev/kmsg" || src == "journalctl -k" || src == "dmesg"
}
