package oomexplain

import (
	"slices"
	"strconv"
	"strings"
)

// parseTrigger: "<comm> invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL),
// [nodemask=(null), ]order=0, oom_score_adj=0" (3.10: "gfp_mask=0x201da").
func parseTrigger(text string, prev *Trigger) *Trigger {
	i := strings.Index(text, " invoked oom-killer:")
	t := &Trigger{Comm: strings.TrimSpace(text[:i])}
	if prev != nil && prev.PID != nil {
		t.PID = prev.PID
	}
	for _, kv := range strings.Split(text[i+len(" invoked oom-killer:"):], ",") {
		key, val, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			continue
		}
		switch key {
		case "gfp_mask":
			t.GFPMask = val
		case "order":
			t.Order = atoiPtr(val)
		case "oom_score_adj":
			t.OOMScoreAdj = atoiPtr(val)
		}
	}
	return t
}

// parseCPULine: "CPU: 1 UID: 0 PID: 19335 Comm: python3 Not tainted ..."
// gives the triggering task's pid.
func parseCPULine(ko *KernelOOM, t string) {
	f := strings.Fields(t)
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "PID:" && ko.Trigger != nil && ko.Trigger.PID == nil {
			ko.Trigger.PID = atoiPtr(f[i+1])
		}
	}
}

// parseCpusetLine: "python cpuset=/ mems_allowed=0" (3.x, 4.x).
func parseCpusetLine(ko *KernelOOM, t string) {
	for _, f := range strings.Fields(t) {
		if v, ok := strings.CutPrefix(f, "cpuset="); ok {
			ko.Cpuset = v
		} else if v, ok := strings.CutPrefix(f, "mems_allowed="); ok {
			ko.MemsAllowed = v
		}
	}
}

// parseTaskIn: "Task in /a killed as a result of limit of /b" (< 5.0).
func parseTaskIn(ko *KernelOOM, t string) {
	rest := t[strings.Index(t, "Task in ")+len("Task in "):]
	task, limit, ok := strings.Cut(rest, " killed as a result of limit of ")
	if !ok {
		return
	}
	if !strings.HasPrefix(task, "/") {
		task = "…" + task // the line's start was lost (a wrapped paste's first half)
	}
	ko.TaskMemcg, limit = task, strings.TrimSpace(limit)
	if limit == "host" {
		// Vendor kernels (Alibaba Cloud Linux 4.19) name no cgroup: the
		// host, or the NUMA nodes the task may use, ran out.
		ko.LimitOfHost = true
		return
	}
	ko.OOMMemcg = limit
	inferConstraint(ko, "CONSTRAINT_MEMCG", "Task in ... killed as a result of limit of "+limit)
}

// inferConstraint sets a constraint the report did not print, naming the
// evidence; the "oom-kill:constraint=" line, when it comes, overrides it.
func inferConstraint(ko *KernelOOM, c, evidence string) {
	if ko.Constraint == "" {
		ko.Constraint, ko.ConstraintInferred = c, evidence
	}
}

// parseOOMKillKV: "constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,
// mems_allowed=0,oom_memcg=/a,task_memcg=/a,task=python3,pid=19335,uid=0".
// mems_allowed may itself hold commas ("0,2"): a piece without '=' belongs
// to the value before it.
func parseOOMKillKV(ko *KernelOOM, s string) {
	var keys, vals []string
	for _, piece := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(piece, "=")
		if !ok && len(vals) > 0 && strings.Trim(piece, "0123456789-") == "" {
			vals[len(vals)-1] += "," + piece
			continue
		}
		if !ok && piece == "global_oom" && len(keys) > 0 {
			continue // 5.x marks a host-wide OOM with a bare flag
		}
		keys, vals = append(keys, k), append(vals, v)
	}
	markCutKV(ko, keys)
	var task Victim
	for i, k := range keys {
		v := vals[i]
		switch k {
		case "task":
			task.Comm = v
		case "pid":
			if n := atoiPtr(v); n != nil {
				task.PID = *n
			}
		case "uid":
			task.UID = atoiPtr(v)
		case "constraint":
			ko.Constraint, ko.ConstraintInferred = v, ""
		case "nodemask":
			ko.Nodemask = v
		case "cpuset":
			ko.Cpuset = v
		case "mems_allowed":
			ko.MemsAllowed = v
		case "oom_memcg":
			ko.OOMMemcg = v
		case "task_memcg":
			ko.TaskMemcg = v
		}
	}
	if keys[len(keys)-1] == "task_memcg" && ko.OOMMemcgTruncated {
		ko.TaskMemcg += "…"
		ko.OOMMemcgTruncated = false
	}
	// The summary names the task the kernel chose; its "Killed process"
	// line, when it comes, replaces this with the sizes (an excerpt may
	// hold only the summary: corpus kernel/023).
	if ko.Victim == nil && task.Comm != "" && task.PID > 0 {
		ko.Victim = &task
	}
}

// markCutKV: the kernel ends the line with ",task=%s,pid=%d,uid=%d"; a
// line without them was cut, and its last value (a cgroup name, which may
// be long) may be cut too. OOMMemcgTruncated is set when that value is
// oom_memcg's, and (reset by parseOOMKillKV) when it is task_memcg's.
func markCutKV(ko *KernelOOM, keys []string) {
	last := keys[len(keys)-1]
	ko.OOMMemcgTruncated = !slices.Contains(keys, "task") && (last == "oom_memcg" || last == "task_memcg")
}

// noLimitKB is what the kernel prints for an unlimited memcg (PAGE_COUNTER_MAX pages).
const noLimitKB = 9007199254740988

// parseMemcgCounters: "memory: usage 102400kB, limit 102400kB, failcnt 1473"
// and the same for "memory+swap", "swap", "kmem".
func parseMemcgCounters(ko *KernelOOM, t string) {
	name, rest, _ := strings.Cut(t, ": usage ")
	c := &MemcgCounters{}
	seen := 0
	for i, f := range strings.Split("usage "+rest, ",") {
		fs := strings.Fields(f)
		if len(fs) != 2 {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(fs[1], "kB"), 10, 64)
		if err != nil {
			continue
		}
		switch {
		case i == 0:
			c.UsageBytes, seen = kb(n), seen+1
		case fs[0] == "limit":
			c.LimitBytes, c.Unlimited, seen = kb(n), n >= noLimitKB/2, seen+1
		case fs[0] == "failcnt":
			c.Failcnt = n
		}
	}
	if seen < 2 {
		return // a cut line: a missing usage or limit must not read as 0
	}
	switch name {
	case "memory":
		ko.Memcg = c
	case "memory+swap":
		ko.Memsw = c
	case "swap":
		ko.Swap = c
	case "kmem":
		ko.Kmem = c
	}
}

func kb(n int64) int64 {
	if n > (1<<63-1)/1024 {
		return 1<<63 - 1
	}
	return n * 1024
}

// memcgStatKeys are the stats worth keeping (v1 and v2 names), in bytes.
var memcgStatKeys = map[string]bool{
	"anon": true, "file": true, "kernel": true, "shmem": true, "sock": true,
	"rss": true, "cache": true, "rss_huge": true, "mapped_file": true, "swap": true,
	"pagetables": true, "slab": true, "anon_thp": true, "file_mapped": true,
	"hierarchical_memory_limit": true, "hierarchical_memsw_limit": true,
}

// memcgStatsHeader reads a stats header line. A line completed by a
// wrapped continuation is read again whole: what its first half added is
// taken back first, so no counter is counted twice.
func (k *kernelParser) memcgStatsHeader(ko *KernelOOM, t string, rejoin bool) {
	if rejoin {
		for key, v := range k.inline {
			ko.MemcgStats[key] -= v
		}
		if k.ownPath {
			ko.MemcgStatsPath = ""
		}
	}
	k.ownPath = ko.MemcgStatsPath == ""
	k.inline = parseMemcgStatsHeader(ko, t)
}

// parseMemcgStatsHeader: "Memory cgroup stats for /a:" and, before 4.19
// or so, the stats inline: "Memory cgroup stats for /a: cache:0KB rss:1024KB".
// It returns what it added to MemcgStats. A path with no ':' after it was
// cut (the rest of the line is missing): it is marked with a trailing "…".
func parseMemcgStatsHeader(ko *KernelOOM, t string) map[string]int64 {
	rest := strings.TrimPrefix(t, "Memory cgroup stats for ")
	path, inline, whole := strings.Cut(rest, ":")
	if !whole {
		path += "…"
	}
	if ko.MemcgStatsPath == "" {
		ko.MemcgStatsPath = path
	}
	// The inline form is printed once per cgroup of the OOM memcg's
	// subtree, each with its own (local) counters: they add up.
	added := map[string]int64{}
	for _, f := range strings.Fields(inline) {
		k, v, ok := strings.Cut(f, ":")
		if n, err := strconv.ParseInt(strings.TrimSuffix(v, "KB"), 10, 64); ok && err == nil && memcgStatKeys[k] {
			if ko.MemcgStats == nil {
				ko.MemcgStats = map[string]int64{}
			}
			ko.MemcgStats[k] += kb(n)
			added[k] += kb(n)
		}
	}
	return added
}

// completeCutNames: an oom_memcg cut with its line is completed from the
// stats header, which names the same cgroup (4.19+ print the OOM memcg's
// stats) when it starts with the cut name.
//
// A report missing the lines that name the OOM memcg ("Task in",
// "oom-kill:") gets it from the first stats header: the kernel prints the
// OOM memcg's stats first (mem_cgroup_print_oom_info walks its subtree
// from the top; 4.19+ print only its own).
func completeCutNames(ko *KernelOOM) {
	p := ko.MemcgStatsPath
	if ko.OOMMemcg == "" && p != "" && !strings.HasSuffix(p, "…") && !ko.LimitOfHost {
		ko.OOMMemcg = p
	}
	if ko.OOMMemcgTruncated && ko.OOMMemcg != "" && !strings.HasSuffix(p, "…") && strings.HasPrefix(p, ko.OOMMemcg) {
		ko.OOMMemcg, ko.OOMMemcgTruncated = p, false
	}
}

// parseMemcgStatLine: "rss 104534016" (v1, >= 4.19 style) or "anon 104554496" (v2).
func parseMemcgStatLine(ko *KernelOOM, t string) {
	k, v, ok := strings.Cut(t, " ")
	if !ok || !memcgStatKeys[k] {
		return
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
		setStat(ko, k, n)
	}
}

func setStat(ko *KernelOOM, k string, n int64) {
	if ko.MemcgStats == nil {
		ko.MemcgStats = map[string]int64{}
	}
	if _, dup := ko.MemcgStats[k]; !dup {
		ko.MemcgStats[k] = n
	}
}

func atoiPtr(s string) *int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return nil
	}
	return &n
}

func i64Ptr(n int64) *int64 { return &n }
