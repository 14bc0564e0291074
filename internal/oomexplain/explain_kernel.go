package oomexplain

import (
	"fmt"
	"strings"
	"time"
)

const time60 = 60 * time.Second

func explainKernel(inc *Incident, ctx Context) Explanation {
	ko := inc.Kernel
	var e Explanation
	switch {
	case ko.Constraint == "" && ko.OOMMemcg == "" && ko.Memcg == nil && ko.MemInfo == nil && len(ko.Tasks) == 0 && ko.Victim == nil:
		e = Explanation{Verdict: VerdictIncomplete,
			Summary:         "the kernel's OOM killer ran, but this log holds too little of its report to tell whether a cgroup limit or the whole host ran out",
			Recommendations: []string{"read the full report: `torchmem oom` on that host, or `dmesg -T` around this time"}}
	case ko.Constraint == "CONSTRAINT_MEMCG" || ko.Constraint == "" && ko.OOMMemcg != "" && ko.MemInfo == nil:
		e = explainMemcg(ko, ctx)
	case ko.Constraint == "CONSTRAINT_CPUSET" || ko.Constraint == "CONSTRAINT_MEMORY_POLICY":
		e = explainCpuset(ko)
	default:
		e = explainHostRAM(ko, ctx)
	}
	e.Arithmetic = append(e.Arithmetic, victimLines(ko, ctx)...)
	if t := ko.Trigger; t != nil && t.Order != nil && *t.Order >= 4 {
		e.Arithmetic = append(e.Arithmetic, fmt.Sprintf("the failing request was order %d (%s of physically contiguous memory): fragmentation of RAM can cause this even with memory free", *t.Order, b(int64(4096)<<*t.Order)))
	}
	if inc.Truncated {
		e.Arithmetic = append(e.Arithmetic, "the report is incomplete in this log: numbers not shown were not logged")
	}
	return e
}

func explainMemcg(ko *KernelOOM, ctx Context) Explanation {
	cg := ko.OOMMemcg
	if cg == "" {
		cg = ko.MemcgStatsPath
	}
	e := Explanation{Verdict: VerdictCgroupLimit,
		Summary: fmt.Sprintf("the memory cgroup %s hit its limit; the kernel killed a process inside it (the host itself was not out of memory)", orUnknown(cg))}
	if m := ko.Memcg; m != nil {
		e.Arithmetic = append(e.Arithmetic, fmt.Sprintf("cgroup %s: usage %s of limit %s (%s), limit hit %d times (failcnt)",
			orUnknown(cg), b(m.UsageBytes), b(m.LimitBytes), pct(m.UsageBytes, m.LimitBytes), m.Failcnt))
	}
	if m := ko.Memsw; m != nil && !m.Unlimited {
		e.Arithmetic = append(e.Arithmetic, fmt.Sprintf("memory+swap: usage %s of limit %s (%s), limit hit %d times",
			b(m.UsageBytes), b(m.LimitBytes), pct(m.UsageBytes, m.LimitBytes), m.Failcnt))
		if m.UsageBytes >= m.LimitBytes && (ko.Memcg == nil || ko.Memcg.UsageBytes < ko.Memcg.LimitBytes) {
			e.Summary = fmt.Sprintf("the memory cgroup %s hit its memory+swap limit (memory.memsw.limit_in_bytes): RAM was below its limit but swap was exhausted", orUnknown(cg))
		}
	}
	if s := ko.Swap; s != nil && !s.Unlimited {
		e.Arithmetic = append(e.Arithmetic, fmt.Sprintf("swap allowed to the cgroup: %s, used %s", b(s.LimitBytes), b(s.UsageBytes)))
	}
	e.Arithmetic = append(e.Arithmetic, memcgStatLine(ko)...)
	if ctx.CgroupPath != "" && strings.HasSuffix(cg, ctx.CgroupPath) {
		s := "this is the job's own cgroup"
		if ctx.CgroupLimitBytes > 0 {
			s += ", limited to " + b(ctx.CgroupLimitBytes)
		}
		e.Arithmetic = append(e.Arithmetic, s)
	} else if ctx.CgroupPath != "" && cg != "" && strings.HasPrefix(ctx.CgroupPath, cg) {
		e.Arithmetic = append(e.Arithmetic, fmt.Sprintf("%s is above the job's cgroup %s: an outer limit (Slurm, a container, a systemd slice) was hit, not the job's own", cg, ctx.CgroupPath))
	}
	e.Recommendations = append(e.Recommendations, limitOwnerAdvice(cg, ko)...)
	e.Recommendations = append(e.Recommendations,
		"reduce the job's host memory: fewer DataLoader workers (num_workers), a smaller prefetch_factor, datasets held as numpy arrays or memory-mapped files rather than Python lists (workers copy Python objects on access)")
	if sh := ko.MemcgStats["shmem"]; sh > 0 && ko.Memcg != nil && sh*10 > ko.Memcg.UsageBytes {
		e.Recommendations = append(e.Recommendations, fmt.Sprintf("%s of the cgroup's usage is shared memory (/dev/shm, DataLoader batches in flight): it counts against the limit too", b(sh)))
	}
	return e
}

// limitOwnerAdvice says who set the limit, from the cgroup's path.
func limitOwnerAdvice(cg string, ko *KernelOOM) []string {
	usage := ""
	if ko.Memcg != nil {
		usage = " (now " + b(ko.Memcg.LimitBytes) + ")"
	}
	switch {
	case strings.Contains(cg, "slurm") || strings.Contains(cg, "/job_"):
		return []string{"the limit is the Slurm job's: request more with --mem / --mem-per-gpu" + usage + ", and compare with `sacct -j JOBID --format=JobID,MaxRSS,ReqMem`"}
	case strings.Contains(cg, "kubepods"):
		return []string{"the limit is the Kubernetes pod's: raise resources.limits.memory" + usage}
	case strings.Contains(cg, "docker") || strings.Contains(cg, "containerd") || strings.Contains(cg, "libpod"):
		return []string{"the limit is the container's: raise docker/podman --memory" + usage}
	case strings.HasSuffix(cg, ".service") || strings.HasSuffix(cg, ".scope") || strings.HasSuffix(cg, ".slice"):
		return []string{"the limit is a systemd unit's MemoryMax=/MemoryLimit=" + usage + ": raise it with `systemctl set-property UNIT MemoryMax=...`"}
	}
	return []string{"raise the cgroup's limit (memory.max on cgroup v2, memory.limit_in_bytes on v1)" + usage + " above the job's peak, e.g. `torchmem run --memory-max SIZE`"}
}

func memcgStatLine(ko *KernelOOM) []string {
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
	return []string{"cgroup memory by kind: " + strings.Join(parts, ", ")}
}

func explainCpuset(ko *KernelOOM) Explanation {
	return Explanation{Verdict: VerdictCpusetExhausted,
		Summary: fmt.Sprintf("the NUMA nodes the task may use (mems_allowed=%s) ran out of memory; other nodes may still have had free memory", orUnknown(ko.MemsAllowed)),
		Recommendations: []string{
			"widen the job's memory binding: numactl --interleave=all or --preferred instead of --membind, or a cpuset with more mems",
			"check per-node free memory with `numastat -m` before binding a job to one node",
		}}
}

func explainHostRAM(ko *KernelOOM, ctx Context) Explanation {
	e := Explanation{Verdict: VerdictHostExhausted,
		Summary: "the whole host ran out of memory (RAM and swap); the kernel killed the process with the highest OOM score"}
	if mi := ko.MemInfo; mi != nil {
		e.Arithmetic = append(e.Arithmetic, memInfoLines(mi)...)
	} else if ctx.HostRAMBytes > 0 {
		e.Arithmetic = append(e.Arithmetic, "host RAM "+b(ctx.HostRAMBytes)+" (MemTotal)")
	}
	e.Arithmetic = append(e.Arithmetic, topTasksLine(ko))
	if ctx.CgroupLimitBytes > 0 && ko.Victim != nil && hasInt(ctx.JobPIDs, ko.Victim.PID) {
		e.Arithmetic = append(e.Arithmetic, "the job's own limit ("+b(ctx.CgroupLimitBytes)+") was not reached: the host ran out first; lower the limit below what the host can give")
	}
	e.Recommendations = []string{
		"run the job under its own memory limit (`torchmem run --memory-max SIZE`) so that it, not the host, hits the wall, and gets a clear report",
		"reduce the job's host memory: fewer DataLoader workers, smaller prefetch_factor, numpy/memory-mapped datasets instead of Python lists, pin_memory only where needed",
		"add swap or stop other large processes listed above",
	}
	if mi := ko.MemInfo; mi != nil && val(mi.HugePagesBytes) > 0 && mi.TotalRAMBytes != nil && val(mi.HugePagesBytes)*10 > *mi.TotalRAMBytes {
		e.Recommendations = append(e.Recommendations, fmt.Sprintf("%s is reserved as huge pages (vm.nr_hugepages) and unavailable to normal allocations: lower it if nothing uses them", b(*mi.HugePagesBytes)))
	}
	return e
}

func memInfoLines(mi *MemInfo) []string {
	var out []string
	if mi.TotalRAMBytes != nil {
		s := "RAM " + b(*mi.TotalRAMBytes)
		if mi.FreeBytes != nil {
			s += ", free " + b(*mi.FreeBytes) + " (" + pct(*mi.FreeBytes, *mi.TotalRAMBytes) + ")"
		}
		out = append(out, s)
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
		out = append(out, "in use: "+strings.Join(parts, ", "))
	}
	if mi.SwapTotalBytes != nil {
		out = append(out, fmt.Sprintf("swap %s, free %s", b(*mi.SwapTotalBytes), b(val(mi.SwapFreeBytes))))
	}
	return out
}

func topTasksLine(ko *KernelOOM) string {
	if len(ko.Tasks) == 0 {
		return "the task table was not logged"
	}
	var parts []string
	for i, t := range ko.Tasks {
		if i == 5 {
			break
		}
		parts = append(parts, fmt.Sprintf("%s (pid %d) %s", t.Name, t.PID, b(t.RSSBytes)))
	}
	return fmt.Sprintf("biggest processes by RSS (of %d): %s", ko.TasksTotal, strings.Join(parts, ", "))
}

// victimLines shows who was killed and what it held.
func victimLines(ko *KernelOOM, ctx Context) []string {
	v := ko.Victim
	if v == nil {
		if ko.NoKillable {
			return []string{"no process could be killed (all had oom_score_adj -1000): the kernel panicked or the allocation failed"}
		}
		return []string{"the kill line is not in this log"}
	}
	s := fmt.Sprintf("killed %s (pid %d): anon-rss %s + file-rss %s + shmem-rss %s = %s resident, total-vm %s",
		v.Comm, v.PID, b(val(v.AnonRSSBytes)), b(val(v.FileRSSBytes)), b(val(v.ShmemRSSBytes)),
		b(val(v.AnonRSSBytes)+val(v.FileRSSBytes)+val(v.ShmemRSSBytes)), b(val(v.TotalVMBytes)))
	out := []string{s}
	if t := ko.Trigger; t != nil && t.PID != nil && *t.PID != v.PID {
		out = append(out, fmt.Sprintf("the allocation that failed was by %s (pid %d); the victim was chosen by OOM score", t.Comm, *t.PID))
	}
	if hasInt(ctx.JobPIDs, v.PID) {
		out = append(out, "the victim was one of the job's processes")
	}
	return out
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}
