package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

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

func oomPrint(w io.Writer, rep oomReport, asJSON bool, args []string) error {
	if rep.Incidents == nil {
		rep.Incidents = []oomexplain.Incident{}
	}
	incs := rep.Incidents
	if asJSON {
		return writeJSON(w, rep)
	}
	if len(incs) == 0 {
		where := "the kernel log"
		if len(args) > 0 {
			where = strings.Join(args, ", ")
		}
		_, err := fmt.Fprintf(w, "no out-of-memory incidents found in %s\n", termsafe.Line(where))
		return err
	}
	for i, inc := range incs {
		if err := oomPrintOne(w, inc, i+1, false); err != nil {
			return err
		}
	}
	return nil
}

// oomPrintOne prints one incident block, or with asJSON one incident as a
// single line of JSON (--follow --json is a stream: one object per line,
// so it is not indented like writeJSON's documents).
func oomPrintOne(w io.Writer, inc oomexplain.Incident, n int, asJSON bool) error {
	if asJSON {
		b, err := json.Marshal(inc)
		if err != nil {
			return fmt.Errorf("encode json: %w", err)
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "[%d] %s\n", n, termsafe.Line(oomTitle(&inc)))
	oomField(&sb, "when", oomWhen(&inc))
	if e := inc.Explanation; e != nil {
		oomField(&sb, "verdict", oomVerdictText(e))
		for i, a := range e.Arithmetic {
			oomField(&sb, map[bool]string{true: "numbers", false: ""}[i == 0], a)
		}
		for i, a := range e.Advice {
			oomField(&sb, map[bool]string{true: "do", false: ""}[i == 0], "- "+a.Text)
			if a.Because != "" {
				oomField(&sb, "", "  because "+a.Because)
			}
		}
	}
	sb.WriteString("\n")
	_, err := io.WriteString(w, sb.String())
	return err
}

// oomVerdictText is the verdict, the alternatives the evidence cannot
// rule out, and the summary.
func oomVerdictText(e *oomexplain.Explanation) string {
	v := string(e.Verdict)
	if len(e.Alternatives) > 0 {
		alts := make([]string, len(e.Alternatives))
		for i, a := range e.Alternatives {
			alts[i] = string(a)
		}
		v += " (or " + strings.Join(alts, ", ") + ")"
	}
	return v + ": " + e.Summary
}

// oomField prints one line of an incident; the value holds what the log
// said (process names, cgroup paths, file names), escaped for the terminal.
func oomField(sb *strings.Builder, name, value string) {
	fmt.Fprintf(sb, "    %-8s %s\n", name, termsafe.Line(value))
}

func oomWhen(inc *oomexplain.Incident) string {
	var parts []string
	if inc.Time != nil {
		parts = append(parts, inc.Time.Local().Format("2006-01-02 15:04:05 MST"))
	}
	if inc.UptimeSeconds != nil {
		parts = append(parts, fmt.Sprintf("%.6f s after boot", *inc.UptimeSeconds))
	}
	where := inc.Source
	if inc.Line > 0 && !oomLiveSource(inc.Source) {
		where = fmt.Sprintf("%s line %d", inc.Source, inc.Line)
	}
	parts = append(parts, where)
	if inc.Host != "" {
		parts = append(parts, "host "+inc.Host)
	}
	if inc.Count > 1 {
		parts = append(parts, fmt.Sprintf("reported %d times", inc.Count))
	}
	return strings.Join(parts, " · ")
}

func oomTitle(inc *oomexplain.Incident) string {
	rank := ""
	if inc.Rank != nil {
		rank = fmt.Sprintf(" (rank %d)", *inc.Rank)
	}
	switch {
	case inc.Kernel != nil:
		return oomKernelTitle(inc.Kernel, inc.Explanation)
	case inc.CUDA != nil:
		return oomCUDATitle(inc) + rank
	}
	pids := ""
	if len(inc.PIDs) > 0 {
		pids = " (pid " + strings.ReplaceAll(strings.Trim(fmt.Sprint(inc.PIDs), "[]"), " ", ", ") + ")"
	}
	titles := map[oomexplain.Kind]string{
		oomexplain.KindDataLoaderKilled: "DataLoader worker killed",
		oomexplain.KindDataLoaderExited: "DataLoader worker exited unexpectedly",
		oomexplain.KindSharedMemory:     "shared memory (/dev/shm) failure",
		oomexplain.KindTooManyOpenFiles: "too many open files sharing tensors",
		oomexplain.KindTorchrunSIGKILL:  "torchrun child killed (SIGKILL)",
		oomexplain.KindSlurmOOM:         "Slurm job OOM kill",
		oomexplain.KindSystemdOOMD:      "systemd-oomd kill",
		oomexplain.KindShellKilled:      "killed (the shell's report)",
		oomexplain.KindContainerKilled:  "container killed",
	}
	return titles[inc.Kind] + pids + rank
}

// oomKernelTitle names the victim and where the memory ran out, as the
// explanation decided (the title never claims more than the verdict).
func oomKernelTitle(k *oomexplain.KernelOOM, e *oomexplain.Explanation) string {
	s := "kernel OOM kill"
	if v := k.Victim; v != nil {
		s += fmt.Sprintf(": %s (pid %d)", v.Comm, v.PID)
	} else if sel := k.Selected; sel != nil {
		s += fmt.Sprintf(": %s (pid %d) selected", sel.Comm, sel.PID)
	}
	if e == nil || len(e.Alternatives) > 0 {
		return s
	}
	switch e.Verdict {
	case oomexplain.VerdictCgroupLimit:
		if k.OOMMemcg != "" {
			return s + " in memory cgroup " + k.OOMMemcg
		}
		return s + " in a memory cgroup"
	case oomexplain.VerdictCpusetExhausted:
		return s + " (NUMA nodes " + k.MemsAllowed + " exhausted)"
	case oomexplain.VerdictHostExhausted:
		return s + " (whole host)"
	}
	return s
}

func oomCUDATitle(inc *oomexplain.Incident) string {
	c := inc.CUDA
	gpu := ""
	if c.Device != nil {
		gpu = fmt.Sprintf(" on GPU %d", *c.Device)
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
		s += ": tried to allocate " + units.Bytes(*c.RequestedBytes)
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
