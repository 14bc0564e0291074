package oomexplain

// The kernel's OOM report (mm/oom_kill.c dump_header + oom_kill_process,
// mm/memcontrol.c mem_cgroup_print_oom_*), 6.18 with a v1 memory cgroup:
//
//	python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0
//	CPU: 1 UID: 0 PID: 19335 Comm: python3 Not tainted 6.18.44 #1
//	 ... call trace ...
//	memory: usage 102400kB, limit 102400kB, failcnt 1473
//	Memory cgroup stats for /trainjob:
//	rss 104534016 ...
//	Tasks state (memory values in pages):
//	[  pid  ]   uid  tgid total_vm      rss rss_anon rss_file rss_shmem pgtables_bytes swapents oom_score_adj name
//	[  19335]     0 19335    80289    26152    25504      648         0   266240        0             0 python3
//	oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/trainjob,task_memcg=/trainjob,task=python3,pid=19335,uid=0
//	Memory cgroup out of memory: Killed process 19335 (python3) total-vm:321156kB, anon-rss:102016kB, file-rss:2592kB, shmem-rss:0kB, UID:0 pgtables:260kB oom_score_adj:0
//
// 3.10 (CentOS 7) and 4.x instead print "Task in /a killed as a result of
// limit of /b", "Memory cgroup stats for /a: cache:0KB rss:1024KB ...",
// "Out of memory: Kill process N (comm) score S or sacrifice child" and
// "Killed process N (comm) total-vm:...kB, anon-rss:...kB, file-rss:...kB".
// A global OOM prints "Mem-Info:" and per-zone lines instead of memcg ones.

import "strings"

// maxKernelLines ends an incident whose "Killed process" line never came;
// maxIdleLines ends one after that many lines with nothing of a report
// (a call trace and register dump take about 40).
const (
	maxKernelLines = 5000
	maxIdleLines   = 150
)

type kernelParser struct {
	p          *Parser
	cur        *Incident   // open report
	recent     []*Incident // last complete reports (for late oom_reaper lines)
	lines      int
	mode       int // what indented/following lines belong to
	cols       []string
	prevText   string
	prevInc    *Incident
	prevPref   bool
	prevRaw    int              // physical length of the line prevText came from
	conts      int              // continuation lines joined to prevText so far
	memKV      map[string]int64 // Mem-Info values of the open report
	useful     int              // line number of the report's last recognised line
	inline     map[string]int64 // what the last inline stats line added (undone when it is rejoined)
	ownPath    bool             // that line set MemcgStatsPath
	cutLine    bool             // the line being handled is exactly a terminal's width
	overLimit  bool             // the last report ended at maxKernelLines inside its task table
	taskHeader bool             // the open report printed its task table's header
	faultAt    int              // line of the last page-fault frame outside a report
}

const (
	modeNone = iota
	modeMemcgStats
	modeMemInfo
	modeTasks
)

func newKernelParser(p *Parser) *kernelParser { return &kernelParser{p: p} }

func (k *kernelParser) open() bool { return k.cur != nil || k.prevInc != nil }

func (k *kernelParser) feed(l *line) {
	text := unpad(l.Text, l.raw-len(l.Text))
	if k.isContinuation(l) {
		joined := joinWrapped(k.prevText, text, k.prevRaw)
		k.prevText, k.prevRaw = joined, l.raw
		k.conts++
		k.lines++
		k.p.addRaw(k.prevInc, "\t"+text)
		k.handle(k.prevInc, joined, l, true, k.p.wordsOf(joined))
		return
	}
	if k.cur != nil && l.no-k.useful > maxIdleLines {
		k.finish(true)
	}
	words := l.words
	if len(text) != len(l.Text) {
		words = k.p.wordsOf(text) // unpadded: its pieces were joined
	}
	if words&(wordsKernel|wordsKernelSeen|wordsKernelShape) == 0 && !strings.HasPrefix(strings.TrimSpace(text), "[") {
		k.plain(l, text)
		return
	}
	// report: the line may hold a report's wording; otherwise only its
	// shape (a trace frame, a zone line, a task row) matters.
	report := words&wordsKernel != 0
	if report && (starts(text) || k.cur != nil && nextEvent(k.cur.Kernel, text)) {
		k.begin(l, text)
		k.cur.Truncated = !starts(text) // the next event, its head missing
	}
	if report && strings.Contains(text, "oom_reaper: reaped process") {
		if owner := k.reaperOwner(text); owner != nil && owner != k.cur {
			k.prevText, k.prevInc, k.prevPref, k.prevRaw, k.conts = text, owner, l.Prefixed, l.raw, 0
			k.handle(owner, text, l, false, words)
			return
		}
	}
	inc := k.cur
	if inc == nil {
		k.noteFault(l, text)
		row := headerlessRow(strings.TrimSpace(text))
		switch {
		case row && k.overLimit:
			// the rest of a table whose report hit maxKernelLines
		case row || report && midReport(text): // midReport without the wording is headerlessRow
			k.handle(nil, text, l, false, words)
		default:
			k.prevInc = nil
		}
		k.overLimit = k.overLimit && row
		return
	}
	k.lines++
	k.prevText, k.prevInc, k.prevPref, k.prevRaw, k.conts = text, inc, l.Prefixed, l.raw, 0
	k.handle(inc, text, l, false, words)
	if k.cur != nil && k.lines > maxKernelLines {
		k.finish(true)
		k.overLimit = true
	}
}

// isContinuation: an unprefixed line right after a long prefixed line of
// an incident is the rest of that line, wrapped when it was pasted. Only a
// long line can have been wrapped (or one whose text went entirely to the
// next line), and a line wraps into a few pieces at most: anything else is
// other output that happens to follow the report.
func (k *kernelParser) isContinuation(l *line) bool {
	if k.prevInc == nil || !k.prevPref || l.Prefixed || l.Text == "" || k.conts >= maxContinuations {
		return false
	}
	if k.prevRaw < minWrappedLen && strings.TrimSpace(k.prevText) != "" {
		return false
	}
	return !starts(l.Text) && !strings.HasPrefix(l.Text, "[") && !strings.HasPrefix(strings.TrimSpace(l.Text), "Traceback") &&
		len(k.prevText) < 4096
}

const (
	maxContinuations = 4  // a report line is never more than 5 pasted lines
	minWrappedLen    = 60 // shorter lines were not wrapped
)

// joinWrapped rejoins a line broken by a terminal (cut at its width,
// mid-word, nothing lost) or by word wrapping (a space lost). A break
// next to a separator is unambiguous; so is one inside a token (midToken);
// otherwise a first half exactly as long as a common terminal width
// (aRaw, prefix included) was cut by a terminal, and anything else lost a
// space.
func joinWrapped(a, b string, aRaw int) string {
	if a == "" || strings.HasSuffix(a, " ") || strings.HasPrefix(b, " ") {
		return a + b
	}
	if strings.ContainsAny(a[len(a)-1:], ",=:(/") || strings.ContainsAny(b[:1], ",)=:") || terminalWidth(aRaw) || midToken(a, b) {
		return a + b
	}
	return a + " " + b
}

// midToken: the break fell inside one of the tokens a report prints
// without spaces (corpus kernel/007, a 178-column terminal): a word wrap
// would have started the next line with a whole token, but
//   - after "key:value" or "key=value" the next token is another pair,
//     so a first piece with neither ':' nor '=' is the value's rest
//     ("rss:44" / "8KB rss_huge:0KB"), and
//   - after a cgroup path the report goes on with words, never with
//     another piece holding '/' ("/kubepo" / "ds/pod951f.../0249...").
func midToken(a, b string) bool {
	last := a[strings.LastIndexByte(a, ' ')+1:]
	first, _, _ := strings.Cut(b, " ")
	if strings.ContainsAny(last, ":=") && !strings.ContainsAny(first, ":=") {
		return true
	}
	return strings.HasPrefix(last, "/") && strings.Contains(first, "/")
}

// terminalWidth: a common terminal width (a switch, not a map: it is
// asked for every line of a report).
func terminalWidth(n int) bool {
	switch n {
	case 80, 100, 120, 128, 132, 140, 150, 160, 180, 200, 220, 240, 250, 256:
		return true
	}
	return false
}

// starts reports a line that begins a new report.
func starts(text string) bool {
	return strings.Contains(text, " invoked oom-killer:")
}

// begin opens a report, closing any open one as truncated.
func (k *kernelParser) begin(l *line, text string) {
	if k.cur != nil {
		k.finish(true)
	}
	k.cur = k.p.newIncident(KindKernelOOM, l)
	k.cur.Kernel = &KernelOOM{PageSize: k.p.opts.PageSize}
	k.lines, k.mode, k.cols, k.memKV, k.taskHeader = 0, modeNone, nil, map[string]int64{}, false
	k.useful = l.no
}

// finish emits the open report.
func (k *kernelParser) finish(truncated bool) {
	inc := k.cur
	k.cur = nil
	if inc == nil {
		return
	}
	inc.Truncated = inc.Truncated || truncated
	inc.Kernel.MemInfo = memInfoFrom(k.memKV, k.p.opts.PageSize)
	completeCutNames(inc.Kernel)
	if inc.Kernel.Memcg != nil || inc.Kernel.MemcgStatsPath != "" {
		inferConstraint(inc.Kernel, "CONSTRAINT_MEMCG", "memory cgroup lines (printed only for a memcg OOM)")
	}
	if !k.killEvidence(inc.Kernel) {
		return // a Mem-Info dump without a kill: not an OOM kill (page allocation failure, sysrq)
	}
	fillKernelPIDs(inc)
	k.recent = append(k.recent, inc)
	if len(k.recent) > 8 {
		k.recent = k.recent[1:]
	}
	k.p.emit(inc)
}

func (k *kernelParser) flush() {
	if k.cur != nil {
		k.finish(true)
	}
	k.prevInc = nil
}

// handle dispatches one line of a report. A line that starts a report when
// none is open (a paste missing its head) opens one. A line without
// kernelWords (words) is read only by its shape.
func (k *kernelParser) handle(inc *Incident, text string, l *line, rejoin bool, words wordSet) {
	if inc == nil {
		if !midReport(text) {
			return
		}
		k.begin(l, text)
		inc = k.cur
		inc.Truncated = true
		inc.Kernel.TracePageFault = k.faultAt > 0 && l.no-k.faultAt <= faultContext
		if t := strings.TrimSpace(text); strings.HasPrefix(t, "Free swap") || strings.HasSuffix(t, " pages RAM") {
			k.mode = modeMemInfo
		}
		k.lines++
		k.prevText, k.prevInc, k.prevPref, k.prevRaw, k.conts = text, inc, l.Prefixed, l.raw, 0
	}
	ko := inc.Kernel
	k.cutLine = terminalWidth(l.raw)
	if !rejoin && k.significant(text) {
		k.p.addRaw(inc, l.Text)
	}
	if k.recognised(text, words) {
		k.useful = l.no
	}
	switch {
	case words&wordsKernel == 0:
		k.shapeLine(ko, strings.TrimSpace(text), rejoin)
	case strings.Contains(text, " invoked oom-killer:"):
		ko.Trigger = parseTrigger(text, ko.Trigger)
	case strings.HasPrefix(strings.TrimLeft(text, " "), "oom-kill:"):
		// A report quoted with an indent (a mail, a patch description:
		// corpus kernel/047) has its lines after spaces.
		parseOOMKillKV(ko, strings.TrimLeft(text, " ")[len("oom-kill:"):])
	case killedAt(text) >= 0:
		if sel, ok := gluedSelection(text); ok {
			parseSelected(ko, sel)
		}
		if parseVictim(ko, text) && inc == k.cur {
			k.finish(false)
		}
	case strings.Contains(text, "oom_reaper: reaped process "):
		ko.Reaped = parseReaped(text)
	case strings.Contains(text, " or sacrifice child"):
		parseSelected(ko, text)
	case strings.Contains(text, "Out of memory and no killable processes"):
		ko.NoKillable = true
		if inc == k.cur {
			k.finish(false)
		}
	default:
		k.handleBody(ko, text, rejoin)
	}
}

// handleBody parses the lines between the trigger and the kill.
func (k *kernelParser) handleBody(ko *KernelOOM, text string, rejoin bool) {
	t := strings.TrimSpace(text)
	switch {
	case strings.HasPrefix(t, "CPU: ") && strings.Contains(t, " PID: "):
		parseCPULine(ko, t)
	case strings.Contains(t, " killed as a result of limit of "):
		parseTaskIn(ko, t)
		// A line exactly as long as a terminal was cut there: the name
		// at its end may go on in a line that was not joined.
		ko.OOMMemcgTruncated = k.cutLine && ko.OOMMemcg != ""
	case strings.Contains(t, ": usage ") && strings.Contains(t, ", limit "):
		parseMemcgCounters(ko, t)
	case strings.HasPrefix(t, "Memory cgroup stats for "):
		k.mode = modeMemcgStats
		k.memcgStatsHeader(ko, t, rejoin)
	case t == "Mem-Info:":
		k.mode = modeMemInfo
		ko.MemInfoPrinted = true
	case strings.HasPrefix(t, "Tasks state") || strings.HasPrefix(t, "[ pid ]") || strings.HasPrefix(t, "[  pid  ]"):
		if strings.HasPrefix(t, "[") {
			k.cols = taskColumns(t)
		}
		k.mode, k.taskHeader = modeTasks, true
	case strings.Contains(t, " cpuset=") && strings.Contains(t, " mems_allowed="):
		parseCpusetLine(ko, t)
	default:
		k.shapeLine(ko, t, rejoin)
	}
}

func (k *kernelParser) handleModeLine(ko *KernelOOM, t string, rejoin bool) {
	if k.mode != modeTasks && headerlessRow(t) {
		k.mode, k.cols = modeTasks, nil // a table pasted without its header
	}
	switch k.mode {
	case modeMemcgStats:
		parseMemcgStatLine(ko, t)
	case modeMemInfo:
		parseMemInfoLine(k.memKV, t)
	case modeTasks:
		if strings.HasPrefix(t, "[") {
			addTaskRow(ko, rowColumns(k.cols, t), t, k.p.opts.MaxTasks, rejoin)
		}
	}
}

// fillKernelPIDs lists the victim (and the trigger when it differs).
func fillKernelPIDs(inc *Incident) {
	ko := inc.Kernel
	add := func(pid int) {
		if !hasInt(inc.PIDs, pid) {
			inc.PIDs = append(inc.PIDs, pid)
		}
	}
	if ko.Victim != nil {
		add(ko.Victim.PID)
	} else if ko.Selected != nil {
		add(ko.Selected.PID)
	}
	if ko.Trigger != nil && ko.Trigger.PID != nil {
		add(*ko.Trigger.PID)
	}
}

// reaperOwner returns the report whose victim the oom_reaper line names:
// the open one or a recent one (the reaper runs asynchronously, and its
// line may come after the next report's first lines). A line naming no
// victim in the log goes to the open report, or to the last one when its
// kill line is missing; otherwise to none.
func (k *kernelParser) reaperOwner(text string) *Incident {
	r := parseReaped(text)
	if r == nil {
		return k.cur
	}
	if k.cur != nil && k.cur.Kernel.Victim != nil && k.cur.Kernel.Victim.PID == r.PID {
		return k.cur
	}
	for i := len(k.recent) - 1; i >= 0; i-- {
		if v := k.recent[i].Kernel.Victim; v != nil && v.PID == r.PID {
			return k.recent[i]
		}
	}
	if k.cur != nil {
		return k.cur
	}
	if n := len(k.recent); n > 0 && k.recent[n-1].Kernel.Victim == nil {
		return k.recent[n-1]
	}
	return nil
}

// nextEvent: a line that a report prints once, seen again after the
// point where the open report printed it, starts the next report (whose
// first lines are missing: "dmesg | grep", a lost record).
func nextEvent(ko *KernelOOM, text string) bool {
	printed := ko.Constraint != "" && ko.ConstraintInferred == "" // its oom-kill: line was seen
	late := printed || ko.Selected != nil
	t := strings.TrimSpace(text)
	switch {
	case strings.HasPrefix(t, "oom-kill:"):
		return printed
	case strings.Contains(t, " or sacrifice child"):
		return ko.Selected != nil
	case strings.Contains(t, " killed as a result of limit of "):
		return late || ko.TaskMemcg != "" || ko.LimitOfHost
	case strings.HasPrefix(t, "memory: usage "):
		return late || ko.Memcg != nil
	case t == "Mem-Info:" || strings.HasPrefix(t, "Tasks state"):
		return late
	}
	return false
}
