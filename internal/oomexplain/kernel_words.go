package oomexplain

// The short paths of the kernel parser: a line of a report's body is
// mostly a trace frame, a zone or counters line or a task row, told by
// its shape; only a line holding a report's wording (kernelWords) needs
// the whole chain of checks. See words.go.

import "strings"

// kernelWords: every literal of a report's wording that feed, handle,
// handleBody, midReport, nextEvent and starts look for holds one of
// these. kernelSeenWords: the words recognised counts as a report's.
// kernelShapeWords: those that shapeLine and noteFault look for (task
// rows and table headers start with '[', checked apart). Trace frames
// name functions with "oom" and "memory" in them: only the precise
// wording sends a line through the whole chain.
var (
	kernelWords = []string{
		"invoked oom-killer", "oom-kill:", "oom_reaper: reaped", "sacrifice child", "killed as a result",
		"memory: usage", "Memory cgroup stats", "Mem-Info:", "Tasks state", "Free swap", "pages RAM", "total-vm:",
		"Killed process", "Out of memory and", "CPU: ", ": usage ", " cpuset=",
	}
	kernelSeenWords = []string{
		"oom", "Killed process", "Kill process", "memory", "Memory cgroup", "Mem-Info", "Tasks state", "CPU: ",
		"cpuset=", "killed as a result",
	}
	kernelShapeWords = []string{"+0x", "Node ", "free:", "mm_fault", "page_fault"}
)

// plain handles a line (text, unpadded) that holds none of kernelWords,
// kernelSeenWords and kernelShapeWords and is no task row: what handle
// does with it. Inside a report it is a raw line and a line of the
// report's current section (memcg stats, Mem-Info); outside one it ends
// the line a continuation could join.
func (k *kernelParser) plain(l *line, text string) {
	inc := k.cur
	if inc == nil {
		k.prevInc, k.overLimit = nil, false
		return
	}
	k.lines++
	k.prevText, k.prevInc, k.prevPref, k.prevRaw, k.conts = text, inc, l.Prefixed, l.raw, 0
	if k.significant(text) {
		k.p.addRaw(inc, l.Text)
	}
	t := strings.TrimSpace(text)
	if k.sectionLine(t) {
		k.useful = l.no
	}
	k.handleModeLine(inc.Kernel, t, false)
	if k.lines > maxKernelLines {
		k.finish(true)
		k.overLimit = true
	}
}

// shapeLine reads a body line by its shape: a task table's header, a
// trace frame, a zone line, or a line of the current section.
func (k *kernelParser) shapeLine(ko *KernelOOM, t string, rejoin bool) {
	switch {
	case strings.HasPrefix(t, "[ pid ]") || strings.HasPrefix(t, "[  pid  ]"):
		k.cols = taskColumns(t)
		k.mode, k.taskHeader = modeTasks, true
	case strings.Contains(t, "+0x"):
		if !parseTraceFrame(ko, t) {
			k.handleModeLine(ko, t, rejoin)
		}
	case nodeLine(t):
		parseNodeLine(ko, t)
	default:
		k.handleModeLine(ko, t, rejoin)
	}
}
