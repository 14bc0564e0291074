package oomexplain

import (
	"fmt"
	"strings"
	"time"
)

const time60 = 60 * time.Second

// explainKernel explains one kernel OOM report: which limit ran out
// (kernelScope), the numbers of that limit, who was chosen and killed,
// and what to change.
func explainKernel(inc *Incident, ctx Context) finding {
	ko := inc.Kernel
	v, alts, sv := kernelScope(ko)
	var fd finding
	switch v {
	case VerdictIncomplete:
		fd = finding{verdict: v, summary: msg("kernel.summary.incomplete")}
		fd.do(adviceMsg("read_full_report"), msg("because.incomplete"))
	case VerdictCgroupLimit:
		fd = explainMemcg(ko, ctx, sv)
	case VerdictCpusetExhausted:
		fd = explainCpuset(ko, sv)
	default:
		fd = explainHostRAM(ko, ctx, sv)
	}
	fd.alts = alts
	if len(alts) > 0 {
		if ev := evidenceOf(sv, alts); len(ev.List) > 0 {
			fd.summary = msgOf("kernel.summary.ambiguous", fd.summary, verdictList(alts), ev)
		} else {
			// Nothing votes for them; they stand because nothing in the
			// report rules them out (no constraint field): say that,
			// not "()".
			fd.summary = msgOf("kernel.summary.ambiguous_silent", fd.summary, verdictList(alts))
		}
		fd.note(msg("alternatives", verdictList(alts)))
	}
	fd.note(victimLines(ko, ctx)...)
	fd.note(orderLine(ko)...)
	if inc.Truncated {
		fd.note(msg("kernel.arith.truncated"))
	}
	return fd
}

// evidenceOf lists the signals that speak for the alternatives.
func evidenceOf(sv scopeVotes, alts []Verdict) Arg {
	var ms []Msg
	for _, a := range alts {
		switch a {
		case VerdictCgroupLimit:
			ms = append(ms, sv.memcg...)
		case VerdictHostExhausted:
			ms = append(ms, sv.host...)
		case VerdictCpusetExhausted:
			ms = append(ms, sv.cpuset...)
		}
	}
	return listArg(ms, "; ")
}

func orderLine(ko *KernelOOM) []Msg {
	if t := ko.Trigger; t != nil && t.Order != nil && *t.Order >= 4 {
		return []Msg{msg("kernel.arith.high_order", itoa(*t.Order), b(int64(4096)<<*t.Order))}
	}
	return nil
}

func explainMemcg(ko *KernelOOM, ctx Context, sv scopeVotes) finding {
	cg := ko.OOMMemcg
	if cg == "" {
		cg = ko.MemcgStatsPath
	}
	if ko.OOMMemcgTruncated && cg != "" {
		cg += "…"
	}
	fd := finding{verdict: VerdictCgroupLimit, summary: msg("kernel.summary.memcg", orUnknown(cg))}
	if memswHit(ko) {
		fd.summary = msg("kernel.summary.memsw", orUnknown(cg))
	}
	fd.note(memcgLines(ko, cg)...)
	fd.note(jobCgroupLine(cg, ctx)...)
	why := firstOr(sv.memcg, msg("evidence.memcg"))
	limit := "?"
	if ko.Memcg != nil && !ko.Memcg.Unlimited {
		limit = b(ko.Memcg.LimitBytes)
	}
	if !ctx.Leak {
		fd.do(adviceMsg("limit_owner."+limitOwner(cg), limit), why)
	}
	memcgUsageAdvice(&fd, ko, ctx)
	return fd
}

// memcgLines: the cgroup's counters.
func memcgLines(ko *KernelOOM, cg string) []Msg {
	var out []Msg
	if m := ko.Memcg; m != nil {
		out = append(out, msg("kernel.arith.memcg", orUnknown(cg), b(m.UsageBytes), limitText(m), pct(m.UsageBytes, m.LimitBytes), fmt.Sprint(m.Failcnt)))
	}
	if m := ko.Memsw; m != nil && !m.Unlimited {
		out = append(out, msg("kernel.arith.memsw", b(m.UsageBytes), b(m.LimitBytes), pct(m.UsageBytes, m.LimitBytes), fmt.Sprint(m.Failcnt)))
	}
	if s := ko.Swap; s != nil && !s.Unlimited {
		out = append(out, msg("kernel.arith.swap", b(s.LimitBytes), b(s.UsageBytes)))
	}
	return append(out, memcgStatLine(ko)...)
}

// memswHit: memory+swap reached its limit while memory alone had not.
func memswHit(ko *KernelOOM) bool {
	m := ko.Memsw
	return m != nil && !m.Unlimited && m.UsageBytes >= m.LimitBytes && (ko.Memcg == nil || ko.Memcg.UsageBytes < ko.Memcg.LimitBytes)
}

func limitText(m *MemcgCounters) string {
	if m.Unlimited {
		return "∞"
	}
	return b(m.LimitBytes)
}

// jobCgroupLine relates the cgroup to the supervised job's, when known.
func jobCgroupLine(cg string, ctx Context) []Msg {
	switch {
	case ctx.CgroupPath == "" || cg == "":
		return nil
	case strings.HasSuffix(strings.TrimSuffix(cg, "…"), ctx.CgroupPath):
		if ctx.CgroupLimitBytes > 0 {
			return []Msg{msg("kernel.arith.job_cgroup_limit", b(ctx.CgroupLimitBytes))}
		}
		return []Msg{msg("kernel.arith.job_cgroup")}
	case strings.HasPrefix(ctx.CgroupPath, cg):
		return []Msg{msg("kernel.arith.outer_cgroup", cg, ctx.CgroupPath)}
	}
	return nil
}

// memcgUsageAdvice: what filled the cgroup, from its stats.
func memcgUsageAdvice(fd *finding, ko *KernelOOM, ctx Context) {
	if n := workerEvidence(ko); n >= 2 {
		fd.do(adviceMsg("workers"), msg("because.python_tasks", itoa(n)))
	} else {
		fd.do(hostMemoryAdvice(ctx), msg("because.cgroup_full"))
	}
	if sh := ko.MemcgStats["shmem"]; sh > 0 && ko.Memcg != nil && sh*10 > ko.Memcg.UsageBytes {
		fd.do(adviceMsg("shm_counts"), msg("because.memcg_shmem", b(sh), pct(sh, ko.Memcg.UsageBytes)))
	}
	if fc := memcgFile(ko); fc > 0 && ko.Memcg != nil && fc*4 > ko.Memcg.UsageBytes {
		fd.do(adviceMsg("page_cache_in_limit"), msg("because.memcg_file", b(fc)))
	}
}

func memcgFile(ko *KernelOOM) int64 {
	if v, ok := ko.MemcgStats["file"]; ok {
		return v
	}
	return ko.MemcgStats["cache"]
}

func memcgStatLine(ko *KernelOOM) []Msg {
	st := ko.MemcgStats
	if len(st) == 0 {
		return nil
	}
	var parts []string
	for _, k := range []string{"anon", "rss", "file", "cache", "shmem", "kernel", "swap"} {
		if v, ok := st[k]; ok {
			parts = append(parts, k+" "+b(v))
		}
	}
	return []Msg{msg("kernel.arith.memcg_stats", strings.Join(parts, ", "))}
}

func explainCpuset(ko *KernelOOM, sv scopeVotes) finding {
	fd := finding{verdict: VerdictCpusetExhausted, summary: msg("kernel.summary.cpuset", orUnknown(ko.MemsAllowed))}
	fd.note(nodeLines(ko)...)
	why := firstOr(sv.cpuset, msg("evidence.text", ko.Constraint))
	fd.do(adviceMsg("widen_binding"), why)
	fd.do(adviceMsg("numastat"), why)
	return fd
}

// nodeLines: each node's free memory against its watermarks.
func nodeLines(ko *KernelOOM) []Msg {
	var out []Msg
	for _, n := range ko.Nodes {
		if n.FreeBytes == nil {
			continue
		}
		out = append(out, msg("kernel.arith.node", itoa(n.Node), b(*n.FreeBytes), sizeOrUnknown(valOr(n.LowBytes, -1)), sizeOrUnknown(valOr(n.HighBytes, -1))))
	}
	return out
}

func explainHostRAM(ko *KernelOOM, ctx Context, sv scopeVotes) finding {
	fd := finding{verdict: VerdictHostExhausted, summary: hostSummary(ko.MemInfo)}
	if mi := ko.MemInfo; mi != nil {
		fd.note(memInfoLines(mi)...)
	} else if ctx.HostRAMBytes > 0 && ctx.SameHost {
		fd.note(msg("kernel.arith.host_ram", b(ctx.HostRAMBytes)))
	}
	fd.note(nodeLines(ko)...)
	fd.note(topTasksLines(ko)...)
	if ctx.CgroupLimitBytes > 0 && ko.Victim != nil && hasInt(ctx.JobPIDs, ko.Victim.PID) {
		fd.note(msg("kernel.arith.job_limit_not_reached", b(ctx.CgroupLimitBytes)))
	}
	why := firstOr(sv.host, msg("evidence.global"))
	if ctx.Supervised && ctx.CgroupLimitBytes > 0 {
		fd.do(adviceMsg("lower_own_limit", b(ctx.CgroupLimitBytes)), why)
	} else {
		fd.do(adviceMsg("own_limit"), why)
	}
	if n := workerEvidence(ko); n >= 2 {
		fd.do(adviceMsg("workers"), msg("because.python_tasks", itoa(n)))
	}
	hostOthersAdvice(&fd, ko)
	if mi := ko.MemInfo; mi != nil && val(mi.HugePagesBytes) > 0 && mi.TotalRAMBytes != nil && val(mi.HugePagesBytes)*10 > *mi.TotalRAMBytes {
		fd.do(adviceMsg("hugepages", b(*mi.HugePagesBytes)), msg("because.hugepages", pct(*mi.HugePagesBytes, *mi.TotalRAMBytes)))
	}
	if mi := ko.MemInfo; mi != nil && mi.SwapTotalBytes != nil && *mi.SwapTotalBytes == 0 {
		fd.do(adviceMsg("add_swap"), msg("because.no_swap"))
	}
	return fd
}

// hostSummary says what ran out: RAM and swap, RAM without swap, or RAM
// (a zone of it) while swap was still free — lowmem/DMA32/CMA zones and
// memory that cannot be swapped end there.
func hostSummary(mi *MemInfo) Msg {
	switch {
	case mi == nil || mi.SwapTotalBytes == nil || mi.SwapFreeBytes == nil:
		return msg("kernel.summary.host")
	case *mi.SwapTotalBytes == 0:
		return msg("kernel.summary.host_no_swap")
	case *mi.SwapFreeBytes*2 >= *mi.SwapTotalBytes:
		return msg("kernel.summary.host_swap_free", b(*mi.SwapFreeBytes), b(*mi.SwapTotalBytes))
	}
	return msg("kernel.summary.host")
}

// hostOthersAdvice names the big processes that are not the victim, when
// the task table lists them.
func hostOthersAdvice(fd *finding, ko *KernelOOM) {
	var names []string
	for _, t := range ko.Tasks {
		if ko.Victim != nil && t.PID == ko.Victim.PID {
			continue
		}
		names = append(names, fmt.Sprintf("%s (pid %d) %s", t.Name, t.PID, b(t.RSSBytes)))
		if len(names) == 3 {
			break
		}
	}
	if len(names) > 0 {
		fd.do(adviceMsg("stop_others", strings.Join(names, ", ")), msg("because.task_table"))
	}
}

func memInfoLines(mi *MemInfo) []Msg {
	var out []Msg
	if mi.TotalRAMBytes != nil {
		free := "?"
		if mi.FreeBytes != nil {
			free = b(*mi.FreeBytes) + " (" + pct(*mi.FreeBytes, *mi.TotalRAMBytes) + ")"
		}
		out = append(out, msg("kernel.arith.ram", b(*mi.TotalRAMBytes), free))
	}
	var parts []string
	for _, kv := range []struct {
		name string
		v    *int64
	}{{"anon", mi.AnonBytes}, {"page cache", mi.FileBytes}, {"shmem", mi.ShmemBytes}, {"slab", mi.SlabBytes}, {"huge pages", mi.HugePagesBytes}} {
		if kv.v != nil {
			parts = append(parts, kv.name+" "+b(*kv.v))
		}
	}
	if len(parts) > 0 {
		out = append(out, msg("kernel.arith.in_use", strings.Join(parts, ", ")))
	}
	if mi.SwapTotalBytes != nil {
		out = append(out, msg("kernel.arith.swap_host", b(*mi.SwapTotalBytes), sizeOrUnknown(valOr(mi.SwapFreeBytes, -1))))
	}
	return out
}

// topTasksLines: the biggest processes, and the dominant one's share.
func topTasksLines(ko *KernelOOM) []Msg {
	if len(ko.Tasks) == 0 {
		return []Msg{msg("kernel.arith.no_task_table")}
	}
	var parts []string
	var sum int64
	for i, t := range ko.Tasks {
		sum += t.RSSBytes
		if i < 5 {
			parts = append(parts, fmt.Sprintf("%s (pid %d) %s", t.Name, t.PID, b(t.RSSBytes)))
		}
	}
	out := []Msg{msg("kernel.arith.top_tasks", itoa(max(ko.TasksTotal, len(ko.Tasks))), strings.Join(parts, ", "))}
	if d := ko.Tasks[0]; sum > 0 && d.RSSBytes*2 > sum {
		out = append(out, msg("kernel.arith.dominant", d.Name, itoa(d.PID), b(d.RSSBytes), pct(d.RSSBytes, sum)))
	}
	return out
}

// victimLines shows who was chosen, who was killed and what it held;
// figures the log did not give are shown as unknown, never as 0 B.
func victimLines(ko *KernelOOM, ctx Context) []Msg {
	v := ko.Victim
	if v == nil {
		if ko.NoKillable {
			return []Msg{msg("kernel.arith.no_killable")}
		}
		return []Msg{msg("kernel.arith.no_kill_line")}
	}
	out := []Msg{msg("kernel.arith.victim", v.Comm, itoa(v.PID), sizePtr(v.AnonRSSBytes), sizePtr(v.FileRSSBytes),
		sizePtr(v.ShmemRSSBytes), residentOf(v), sizePtr(v.TotalVMBytes))}
	if s := ko.Selected; s != nil && s.PID != v.PID {
		score := "?"
		if s.Score != nil {
			score = itoa(*s.Score)
		}
		out = append(out, msg("kernel.arith.sacrifice_child", s.Comm, itoa(s.PID), score, v.Comm, itoa(v.PID)))
	}
	if t := ko.Trigger; t != nil && t.PID != nil && *t.PID != v.PID {
		out = append(out, msg("kernel.arith.trigger_other", t.Comm, itoa(*t.PID)))
	}
	if r := ko.Reaped; r != nil && r.PID == v.PID {
		out = append(out, msg("kernel.arith.reaped", r.Comm, itoa(r.PID)))
	}
	if hasInt(ctx.JobPIDs, v.PID) {
		out = append(out, msg("kernel.arith.victim_is_job"))
	}
	return out
}

// residentOf sums the victim's RSS parts the kill line gave.
func residentOf(v *Victim) string {
	if v.AnonRSSBytes == nil && v.FileRSSBytes == nil && v.ShmemRSSBytes == nil {
		return "?"
	}
	return b(val(v.AnonRSSBytes) + val(v.FileRSSBytes) + val(v.ShmemRSSBytes))
}

func sizePtr(p *int64) string {
	if p == nil {
		return "?"
	}
	return b(*p)
}

func valOr(p *int64, d int64) int64 {
	if p == nil {
		return d
	}
	return *p
}

func firstOr(ms []Msg, d Msg) Msg {
	if len(ms) > 0 {
		return ms[0]
	}
	return d
}

// orUnknown: a name the log did not give, shown as "?" in any language.
func orUnknown(s string) string {
	if s == "" {
		return "?"
	}
	return s
}
