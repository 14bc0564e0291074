package oomexplain

// Which lines belong to a kernel OOM report, and which are worth keeping.

import "strings"

// recognised: a line that belongs to a report (for the idle limit): one
// in the shape of the section being read (stats "key 123", Mem-Info
// "key:123", task rows "[ 123] ..."), or one with a report's wording.
func (k *kernelParser) recognised(text string, words wordSet) bool {
	t := strings.TrimSpace(text)
	if k.sectionLine(t) {
		return true
	}
	if words&wordsKernelSeen == 0 {
		return false // none of these
	}
	for _, w := range kernelSeenWords {
		if strings.Contains(t, w) {
			return true
		}
	}
	return false
}

// sectionLine: t (trimmed) has the shape of the current section's lines.
func (k *kernelParser) sectionLine(t string) bool {
	switch k.mode {
	case modeMemcgStats:
		key, v, ok := strings.Cut(t, " ")
		return ok && key != "" && isDigits(v)
	case modeMemInfo:
		return strings.ContainsAny(t, ":=") || strings.Contains(t, " pages")
	case modeTasks:
		return strings.HasPrefix(t, "[")
	}
	return false
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// significant: the lines worth showing as evidence (not the call trace,
// registers or the long memcg stat dump).
// reportNoise: lines of a report not worth keeping; reportNoiseFirst:
// the bytes they start with (most lines are rejected by that alone).
var (
	reportNoise      = []string{"Call Trace:", "RIP:", "Code:", "RSP:", "RAX:", "RDX:", "RBP:", "R10:", "R13:", "Hardware name:", "Tainted:", "Workqueue:"}
	reportNoiseFirst = func() (first [256]bool) {
		for _, n := range reportNoise {
			first[n[0]] = true
		}
		return first
	}()
)

func (k *kernelParser) significant(text string) bool {
	t := strings.TrimLeft(text, " ")
	if t == "" || t != text && !strings.HasPrefix(t, "active_file") && !strings.HasPrefix(t, "free:") {
		return false // call trace frames start with a space
	}
	if reportNoiseFirst[t[0]] {
		for _, noise := range reportNoise {
			if strings.HasPrefix(t, noise) {
				return false
			}
		}
	}
	return k.mode != modeMemcgStats || strings.HasPrefix(t, "Memory cgroup stats") || strings.HasPrefix(t, "Tasks state") || strings.HasPrefix(t, "[")
}

// killEvidence: the report shows an OOM kill (or its attempt), not only
// the memory dump (show_mem's Mem-Info) that a page allocation failure
// and sysrq-m print too. The memcg lines ("memory: usage", "Memory cgroup
// stats for") are printed only for a memcg OOM (mem_cgroup_print_oom_*),
// the task table and its header only by the OOM killer (dump_tasks): a
// paste holding only them is a report missing its head (corpus
// kernel/026). So is a Mem-Info after a page fault's trace (kernel/017,
// 034): a user fault's allocation is order 0 and is not allowed to fail
// with a warning; the page allocator invokes the OOM killer for it.
func (k *kernelParser) killEvidence(ko *KernelOOM) bool {
	return ko.Trigger != nil || ko.Victim != nil || ko.Selected != nil || ko.Constraint != "" || ko.NoKillable ||
		ko.Memcg != nil || ko.MemcgStatsPath != "" || ko.TasksTotal >= 2 || k.taskHeader || ko.TracePageFault
}

// faultContext: a page fault's trace this close before a Mem-Info that
// opens a report (its head cut off) is that report's.
const faultContext = 64

// noteFault remembers a page-fault frame seen while no report is open.
func (k *kernelParser) noteFault(l *line, text string) {
	if strings.Contains(text, "mm_fault") || strings.Contains(text, "page_fault") {
		if pageFaultFrame(traceFunc(strings.TrimSpace(text))) {
			k.faultAt = l.no
		}
	}
}

// midReport: lines found inside an OOM report, used to open one when the
// paste lacks the "invoked oom-killer" line. The memory dump's lines also
// appear in other reports; an incident opened by them is dropped unless
// kill evidence follows (killEvidence).
func midReport(text string) bool {
	t := strings.TrimSpace(text)
	return strings.HasPrefix(t, "Mem-Info:") || strings.HasPrefix(t, "Tasks state (memory values in pages)") ||
		strings.HasPrefix(t, "Free swap  =") || strings.HasSuffix(t, " pages RAM") ||
		strings.HasPrefix(t, "memory: usage ") || strings.HasPrefix(t, "Memory cgroup stats for ") ||
		strings.HasPrefix(t, "oom-kill:constraint=") ||
		strings.Contains(text, "total-vm:") && killedAt(text) >= 0 ||
		strings.Contains(text, " or sacrifice child") ||
		strings.Contains(text, " killed as a result of limit of ") || headerlessRow(t)
}
