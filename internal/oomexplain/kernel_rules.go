package oomexplain

import "strings"

// The kernel decision: which limit ran out — a memory cgroup's, the whole
// host's, or the NUMA nodes a cpuset/mempolicy allows — from every signal
// the report gives (docs/oom.md, "Decision rules"). The kernel's own
// constraint field wins when printed; otherwise each signal votes, and
// when signals disagree both candidates are named.

// Thresholds of the kernel rules, with why.
const (
	// memcgAtLimitShare: usage at 99% of the limit is at it (the kernel
	// charges in batches of 32–64 pages before it reclaims and fails).
	memcgAtLimitShare = 0.99
	// hostFreeShare: a global OOM leaves less than this share of RAM free
	// (free sits near the min watermarks, ~1–3% of RAM); more free RAM at
	// a kill means the shortage was elsewhere (a node, a zone, an order).
	hostFreeShare = 0.10
	// nodeRoomyFactor: a node with free memory above this many times its
	// high watermark had room when another node was below its low one.
	nodeRoomyFactor = 4
)

// scopeVotes are the signals for each kind of limit, as evidence messages.
type scopeVotes struct{ memcg, host, cpuset []Msg }

// kernelScope decides the verdict and its alternatives.
func kernelScope(ko *KernelOOM) (Verdict, []Verdict, scopeVotes) {
	sv := votesOf(ko)
	switch ko.Constraint {
	case "CONSTRAINT_MEMCG":
		if ko.ConstraintInferred == "" || len(sv.host) == 0 {
			return VerdictCgroupLimit, nil, sv
		}
	case "CONSTRAINT_CPUSET", "CONSTRAINT_MEMORY_POLICY":
		return VerdictCpusetExhausted, nil, sv
	case "CONSTRAINT_NONE":
		if len(sv.cpuset) > 0 {
			return VerdictHostExhausted, []Verdict{VerdictCpusetExhausted}, sv
		}
		return VerdictHostExhausted, nil, sv
	}
	v, alts, sv := voteScope(sv)
	if v == VerdictHostExhausted && !cpusetRuledOut(ko) {
		// No constraint line: a cpuset or mempolicy binding cannot be
		// ruled out unless the task ran in the root cpuset on one node.
		alts = appendUnique(alts, VerdictCpusetExhausted)
	}
	if v != VerdictIncomplete && ko.Victim == nil && ko.Selected == nil && ko.Constraint == "" {
		// No kill, no selection, no constraint: the report is a fragment.
		alts = appendUnique(alts, VerdictIncomplete)
	}
	return v, alts, sv
}

// cpusetRuledOut: the root cpuset with a single allowed node ("cpuset=/
// mems_allowed=0") leaves no binding that could run out before the host.
func cpusetRuledOut(ko *KernelOOM) bool {
	return ko.Cpuset == "/" && ko.MemsAllowed != "" && !strings.ContainsAny(ko.MemsAllowed, ",-")
}

// voteScope decides from the signals when the kernel printed no
// constraint (kernels before 4.19, cut reports).
func voteScope(sv scopeVotes) (Verdict, []Verdict, scopeVotes) {
	m, h, c := len(sv.memcg), len(sv.host), len(sv.cpuset)
	switch {
	case m == 0 && h == 0 && c == 0:
		return VerdictIncomplete, nil, sv
	case c > 0 && m == 0:
		return VerdictCpusetExhausted, []Verdict{VerdictHostExhausted}, sv
	case m > 0 && h == 0:
		return VerdictCgroupLimit, nil, sv
	case h > 0 && m == 0:
		return VerdictHostExhausted, nil, sv
	case m >= h:
		return VerdictCgroupLimit, []Verdict{VerdictHostExhausted}, sv
	}
	return VerdictHostExhausted, []Verdict{VerdictCgroupLimit}, sv
}

// votesOf collects the signals.
func votesOf(ko *KernelOOM) scopeVotes {
	var sv scopeVotes
	switch ko.Constraint {
	case "CONSTRAINT_MEMCG":
		ev := ko.ConstraintInferred
		if ev == "" {
			ev = "oom-kill:constraint=CONSTRAINT_MEMCG"
		}
		sv.memcg = append(sv.memcg, msg("evidence.text", ev))
	case "CONSTRAINT_NONE":
		sv.host = append(sv.host, msg("evidence.text", "oom-kill:constraint=CONSTRAINT_NONE"))
	case "CONSTRAINT_CPUSET", "CONSTRAINT_MEMORY_POLICY":
		sv.cpuset = append(sv.cpuset, msg("evidence.text", "oom-kill:constraint="+ko.Constraint))
	}
	if ko.OOMMemcg != "" && !ko.LimitOfHost {
		sv.memcg = append(sv.memcg, msg("evidence.limit_of", ko.OOMMemcg))
	}
	if m := ko.Memcg; m != nil && !m.Unlimited && m.LimitBytes > 0 && float64(m.UsageBytes) >= memcgAtLimitShare*float64(m.LimitBytes) {
		sv.memcg = append(sv.memcg, msg("evidence.memcg_at_limit", b(m.UsageBytes), b(m.LimitBytes)))
	}
	if ko.TraceMemcg {
		sv.memcg = append(sv.memcg, msg("evidence.trace_memcg"))
	}
	hostVotes(ko, &sv)
	if ko.Constraint != "" {
		return sv
	}
	if ko.GlobalWording {
		sv.host = append(sv.host, msg("evidence.text", "Out of memory: Kill(ed) process"))
	}
	if !ko.TraceMemcg && ko.TracePageAlloc {
		sv.host = append(sv.host, msg("evidence.trace_page_alloc"))
	}
	if ko.MemInfo == nil && ko.MemInfoPrinted {
		sv.host = append(sv.host, msg("evidence.text", "Mem-Info"))
	}
	return sv
}

// hostVotes: signals for a global or node-bound shortage.
func hostVotes(ko *KernelOOM, sv *scopeVotes) {
	if ko.LimitOfHost {
		sv.host = append(sv.host, msg("evidence.limit_of_host"))
	}
	if full, roomy := nodeShortage(ko.Nodes); full >= 0 && roomy >= 0 {
		sv.cpuset = append(sv.cpuset, msg("evidence.node_full", itoa(full), itoa(roomy)))
	} else if full >= 0 && ko.MemInfo != nil && hostHasRoom(ko.MemInfo) {
		sv.cpuset = append(sv.cpuset, msg("evidence.node_full_host_free", itoa(full), b(*ko.MemInfo.FreeBytes)))
	} else if full >= 0 && ko.Cpuset != "" && ko.Cpuset != "/" {
		sv.cpuset = append(sv.cpuset, msg("evidence.node_full_cpuset", itoa(full), ko.Cpuset, orUnknown(ko.MemsAllowed)))
	}
	if ko.Nodemask != "" && ko.Nodemask != "(null)" {
		sv.cpuset = append(sv.cpuset, msg("evidence.text", "nodemask="+ko.Nodemask))
	}
	if mi := ko.MemInfo; mi != nil && len(sv.cpuset) == 0 {
		// A memcg OOM prints the cgroup's counters, not the host's Mem-Info.
		if hostLowOnMemory(mi) {
			sv.host = append(sv.host, msg("evidence.host_low", b(val(mi.FreeBytes)), b(val(mi.TotalRAMBytes))))
		} else {
			sv.host = append(sv.host, msg("evidence.text", "Mem-Info"))
		}
	}
}

// hostHasRoom: free RAM at or above hostFreeShare of a known total.
func hostHasRoom(mi *MemInfo) bool {
	return mi.TotalRAMBytes != nil && mi.FreeBytes != nil && *mi.TotalRAMBytes > 0 &&
		float64(*mi.FreeBytes) >= hostFreeShare*float64(*mi.TotalRAMBytes)
}

// hostLowOnMemory: free RAM under hostFreeShare of the total.
func hostLowOnMemory(mi *MemInfo) bool {
	if mi.TotalRAMBytes == nil || mi.FreeBytes == nil || *mi.TotalRAMBytes <= 0 {
		return false
	}
	return float64(*mi.FreeBytes) < hostFreeShare*float64(*mi.TotalRAMBytes)
}

// nodeShortage finds a node below its low watermark (full) and one with
// ample room (roomy); -1 for what is not there.
func nodeShortage(nodes []NodeMem) (full, roomy int) {
	full, roomy = -1, -1
	for _, n := range nodes {
		if n.FreeBytes == nil || n.LowBytes == nil || n.HighBytes == nil {
			continue
		}
		switch {
		case *n.FreeBytes <= *n.LowBytes && full < 0:
			full = n.Node
		case *n.FreeBytes > nodeRoomyFactor**n.HighBytes && *n.FreeBytes >= gib && roomy < 0:
			roomy = n.Node
		}
	}
	return full, roomy
}

// limitOwner names who set a cgroup's limit, from its path.
func limitOwner(cg string) string {
	switch {
	case strings.Contains(cg, "slurm") || strings.Contains(cg, "/job_"):
		return "slurm"
	case strings.Contains(cg, "kubepods"):
		return "kubernetes"
	case strings.Contains(cg, "docker") || strings.Contains(cg, "containerd") || strings.Contains(cg, "libpod") || strings.Contains(cg, "crio"):
		return "container"
	case strings.HasSuffix(cg, ".service") || strings.HasSuffix(cg, ".scope") || strings.HasSuffix(cg, ".slice"):
		return "systemd"
	case strings.Contains(cg, "torchmem"):
		return "torchmem"
	}
	return "cgroup"
}

// workerEvidence counts the task table's processes that look like a
// PyTorch job's (the victim's name, python, pt_*), the sign that
// DataLoader workers were there: each is a fork of the main process.
func workerEvidence(ko *KernelOOM) int {
	n := 0
	for _, t := range ko.Tasks {
		name := strings.ToLower(t.Name)
		if strings.HasPrefix(name, "python") || strings.HasPrefix(name, "pt_") || ko.Victim != nil && t.Name == ko.Victim.Comm {
			n++
		}
	}
	return n
}
