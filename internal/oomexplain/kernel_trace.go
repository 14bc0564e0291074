package oomexplain

// The call trace of an OOM report, 3.10 and 6.x:
//
//	[<ffffffff811c5f3e>] mem_cgroup_oom_synchronize+0x55e/0x5a0
//	[<ffffffff811c53a0>] ? mem_cgroup_charge_common+0xc0/0xc0
//	 mem_cgroup_out_of_memory+0xe4/0x100
//	 try_charge_memcg+0x1c7/0x7f0
//	 __mem_cgroup_charge+0x44/0xb0
//
// A frame charging a memory cgroup means the allocation failed against a
// cgroup's limit, not the host's memory: on kernels that print no
// constraint it is the evidence for CONSTRAINT_MEMCG. Frames marked '?'
// are stale stack contents (the unwinder is unsure of them) and are not
// evidence.

import "strings"

// traceFunc returns the function of a call-trace frame, "" for other
// lines and for '?' frames.
func traceFunc(t string) string {
	if strings.HasPrefix(t, "[<") {
		i := strings.Index(t, "] ")
		if i < 0 {
			return ""
		}
		t = t[i+2:]
	}
	plus := strings.Index(t, "+0x")
	if plus <= 0 || strings.HasPrefix(t, "?") || strings.ContainsAny(t[:plus], " :=") {
		return ""
	}
	return t[:plus]
}

// memcgFrame: a function that only runs when a memory cgroup is charged
// (try_charge, __mem_cgroup_charge, __memcg_kmem_charge_page,
// obj_cgroup_charge ...) or its OOM is handled. Other memcg functions
// (mem_cgroup_iter in global reclaim, memcg_alloc_slab_cgroups) also run
// in global OOMs and are not evidence.
func memcgFrame(fn string) bool {
	switch fn {
	case "mem_cgroup_out_of_memory", "mem_cgroup_oom", "mem_cgroup_oom_synchronize", "try_charge", "try_charge_memcg", "charge_memcg":
		return true
	}
	fn = strings.TrimLeft(fn, "_")
	cg := strings.HasPrefix(fn, "mem_cgroup_") || strings.HasPrefix(fn, "memcg_") || strings.HasPrefix(fn, "obj_cgroup_")
	return cg && strings.Contains(fn, "charge") && !strings.Contains(fn, "uncharge")
}

// parseTraceFrame marks a report whose trace charges a memory cgroup and,
// when no constraint was printed, infers CONSTRAINT_MEMCG from it.
func parseTraceFrame(ko *KernelOOM, t string) bool {
	fn := traceFunc(t)
	if fn == "" {
		return false
	}
	if memcgFrame(fn) && !ko.LimitOfHost {
		ko.TraceMemcg = true
		inferConstraint(ko, "CONSTRAINT_MEMCG", "call trace: "+fn)
	}
	if pageAllocOOMFrame(fn) {
		ko.TracePageAlloc = true
	}
	if pageFaultFrame(fn) {
		ko.TracePageFault = true
	}
	return true
}

// pageFaultFrame: the generic page-fault handler, on every architecture
// (handle_mm_fault, __handle_mm_fault) and the x86/arm entry points.
func pageFaultFrame(fn string) bool {
	return strings.HasSuffix(fn, "handle_mm_fault") || strings.HasSuffix(fn, "do_page_fault") || fn == "exc_page_fault"
}

// pageAllocOOMFrame: the page allocator's own OOM path (the global or
// cpuset/mempolicy one; a memcg charge failure does not pass here).
func pageAllocOOMFrame(fn string) bool {
	return fn == "__alloc_pages_may_oom" || strings.HasPrefix(fn, "__alloc_pages_slowpath")
}
