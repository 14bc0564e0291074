package doctor

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/torchmem/torchmem/internal/procfs"
	"github.com/torchmem/torchmem/internal/units"
)

// Thresholds of the kernel checks, in one place.
const (
	swappinessWant   = 10 // training hosts: swap only under real pressure
	swapUsedWarnFrac = 0.5
	minFreeBigHost   = 64 << 30 // hosts with at least this much RAM…
	minFreeKBWant    = 65536    // …want at least 64 MiB kept free (RDMA, NIC rings)
)

func checkSwappiness(h *Host) []Finding {
	n, raw, src, err := h.sysctlInt("vm/swappiness")
	if err != nil {
		return []Finding{unreadable("vm.swappiness", "kernel", src, err)}
	}
	f := newFinding("vm.swappiness", "kernel", OK, fmt.Sprintf("vm.swappiness is %d", n)).ev(src, raw)
	if n <= swappinessWant {
		return []Finding{f}
	}
	f.Severity = Warn
	if m, err := h.meminfo(); err == nil && m.SwapTotalBytes != nil && *m.SwapTotalBytes == 0 {
		f.Severity = Info // no swap: the value has nothing to act on yet
		f.Title += " (no swap configured, so it has no effect now)"
	}
	return []Finding{f.
		why("At 60 (Debian/Ubuntu) or 30 (RHEL) the kernel swaps out idle anonymous memory — a DataLoader worker's prefetched batches, a rank's pinned-to-be buffers — to keep page cache, and the step that touches them stalls on swap-in.").
		fix("sysctl -w vm.swappiness=10 and persist it in /etc/sysctl.d/90-torchmem.conf (torchmem tune apply does both).").
		tune("vm.swappiness")}
}

func checkTHP(h *Host) []Finding {
	t, err := procfs.ReadTHP(h.SysRoot)
	src := "/sys/kernel/mm/transparent_hugepage/enabled"
	if err != nil {
		return []Finding{newFinding("thp.enabled", "kernel", Info, "transparent hugepages: not available").ev(src, err.Error())}
	}
	en := newFinding("thp.enabled", "kernel", OK, "transparent hugepages: "+t.Enabled).ev(src, t.Enabled)
	switch t.Enabled {
	case "always":
		en = en.why("With THP always, every large anonymous mapping (the CPU copy of a dataset, pinned staging buffers) is backed by 2 MiB pages: khugepaged compacts memory in the background, causing latency spikes, and sparse allocations bloat RSS up to 512x, which trips cgroup limits.").
			fix("echo madvise > /sys/kernel/mm/transparent_hugepage/enabled, persisted by a tuned profile or a systemd unit (torchmem tune apply). madvise keeps huge pages for code that asks for them (the CUDA caching host allocator, jemalloc).").
			tune("thp.enabled")
		en.Severity = Warn
	case "never":
		en.Severity = Info
		en = en.why("never is the right choice for latency-critical inference servers and hosts with many small jobs; for training, madvise lets allocators that ask for huge pages get them.")
	}
	df := newFinding("thp.defrag", "kernel", OK, "transparent hugepage defrag: "+t.Defrag).
		ev("/sys/kernel/mm/transparent_hugepage/defrag", t.Defrag)
	if t.Defrag == "always" {
		df.Severity = Warn
		df = df.why("defrag=always makes a page fault that wants a huge page compact memory synchronously: a stall of milliseconds to seconds inside the training step.").
			fix("echo madvise > /sys/kernel/mm/transparent_hugepage/defrag (or defer+madvise), persisted by torchmem tune apply.").
			tune("thp.defrag")
	}
	return []Finding{en, df}
}

func checkOvercommit(h *Host) []Finding {
	mode, raw, src, err := h.sysctlInt("vm/overcommit_memory")
	if err != nil {
		return []Finding{unreadable("vm.overcommit_memory", "kernel", src, err)}
	}
	f := newFinding("vm.overcommit_memory", "kernel", OK, fmt.Sprintf("vm.overcommit_memory is %d", mode)).ev(src, raw)
	if mode != 2 {
		return []Finding{f}
	}
	ratio, rraw, rsrc, _ := h.sysctlInt("vm/overcommit_ratio")
	f = f.ev(rsrc, rraw)
	f.Severity = Fail
	f.Title += fmt.Sprintf(" (strict accounting, ratio %d%%)", ratio)
	return []Finding{f.
		why("Mode 2 refuses allocations beyond swap + ratio% of RAM counting address space, not use. A CUDA process maps tens of GB of virtual memory (VmSize 23 GB for one GPT-2 rank), so forking DataLoader workers fails with ENOMEM / 'Cannot allocate memory' long before RAM is short.").
		fix("sysctl -w vm.overcommit_memory=0 (heuristic, the kernel default) and persist it in /etc/sysctl.d/90-torchmem.conf (torchmem tune apply).").
		tune("vm.overcommit_memory")}
}

func checkMinFree(h *Host) []Finding {
	n, raw, src, err := h.sysctlInt("vm/min_free_kbytes")
	if err != nil {
		return []Finding{unreadable("vm.min_free_kbytes", "kernel", src, err)}
	}
	f := newFinding("vm.min_free_kbytes", "kernel", OK, fmt.Sprintf("vm.min_free_kbytes is %d (%s)", n, units.Bytes(n*1024))).ev(src, raw)
	if total := h.memTotal(); total >= minFreeBigHost && n < minFreeKBWant {
		f.Severity = Warn
		f = f.why("On a large host a small free reserve lets bursts of atomic allocations (network receive rings, RDMA/NCCL registration) fail or stall in direct reclaim while the job fills memory.").
			fix(fmt.Sprintf("sysctl -w vm.min_free_kbytes=%d, persisted in /etc/sysctl.d/90-torchmem.conf.", minFreeKBWant)).
			tune("vm.min_free_kbytes")
	}
	return []Finding{f}
}

func checkPSI(h *Host) []Finding {
	const src = "/proc/pressure/memory"
	if psiPresent(h) {
		return []Finding{newFinding("psi", "kernel", OK, "memory pressure (PSI) is available").ev(src, "present")}
	}
	kernel, _, _ := h.procFile("sys/kernel/osrelease")
	cmdline, csrc, _ := h.procFile("cmdline")
	f := newFinding("psi", "kernel", Info, "memory pressure (PSI) is not available").ev(src, "absent").ev("/proc/sys/kernel/osrelease", kernel)
	if kernelBefore(kernel, 4, 20) {
		return []Finding{f.why("Kernel " + kernel + " predates PSI (4.20): torchmem cannot see memory stalls before an OOM, only usage.")}
	}
	f = f.ev(csrc, psiArg(cmdline))
	return []Finding{f.
		why("PSI shows how much time tasks stall waiting for memory — the early warning before an OOM kill. RHEL 8 builds it in but switches it off by default.").
		fix("grubby --update-kernel=ALL --args=psi=1 (RHEL/CentOS) or add psi=1 to GRUB_CMDLINE_LINUX, then reboot.")}
}

// psiPresent asks procfs, which tells PSI switched off from PSI there:
// RHEL 8 without psi=1 has the file, but reading it fails (EOPNOTSUPP).
func psiPresent(h *Host) bool {
	pfs, err := h.procFS()
	if err != nil {
		return false
	}
	_, err = pfs.MemoryPressure()
	return !errors.Is(err, procfs.ErrNotPresent)
}

func psiArg(cmdline string) string {
	for _, a := range strings.Fields(cmdline) {
		if strings.HasPrefix(a, "psi=") {
			return a
		}
	}
	return "no psi= argument"
}

func checkOOMHistory(h *Host) []Finding {
	const src = "/proc/vmstat"
	pfs, err := h.procFS()
	var n *uint64
	if err == nil {
		n, err = pfs.OOMKills()
	}
	if err != nil {
		return []Finding{unreadable("oom.history", "kernel", src, err)}
	}
	if n == nil {
		return []Finding{newFinding("oom.history", "kernel", Info, "OOM kill count unknown (kernel before 4.13 has no oom_kill in /proc/vmstat)").
			ev(src, "no oom_kill line").fix("torchmem oom reads the kernel log instead.")}
	}
	v := strconv.FormatUint(*n, 10)
	f := newFinding("oom.history", "kernel", OK, "no kernel OOM kill since boot").ev(src, "oom_kill "+v)
	if *n == 0 {
		return []Finding{f}
	}
	f.Severity = Warn
	f.Title = "kernel OOM killer fired " + v + " time(s) since boot"
	return []Finding{f.
		why("Something on this host ran out of memory (host RAM or a cgroup limit) and the kernel killed a process.").
		fix("torchmem oom explains each kill from the kernel log (torchmem oom, or torchmem oom /var/log/messages).")}
}

// kernelBefore reports whether release ("3.10.0-1160.el7.x86_64") is older
// than major.minor; unparsable releases are not "before".
func kernelBefore(release string, major, minor int) bool {
	var a, b int
	if n, _ := fmt.Sscanf(release, "%d.%d", &a, &b); n != 2 {
		return false
	}
	return a < major || (a == major && b < minor)
}

// unreadable is the finding of a check whose file could not be read.
func unreadable(id, cat, src string, err error) Finding {
	msg := "unreadable"
	switch {
	case errors.Is(err, fs.ErrNotExist):
		msg = "missing"
	case err != nil:
		msg = err.Error()
	}
	return newFinding(id, cat, Info, id+": could not be read").ev(src, msg)
}

// checkSmapsRollup: kernels before 4.14 have no smaps_rollup, so PSS and
// USS cost a walk of every mapping's smaps lines.
func checkSmapsRollup(h *Host) []Finding {
	_, src, err := h.procFile("self/smaps_rollup")
	if err == nil {
		return []Finding{newFinding("kernel.smaps_rollup", "kernel", OK, "smaps_rollup is available (cheap PSS/USS)").ev(src, "present")}
	}
	kernel, _, _ := h.procFile("sys/kernel/osrelease")
	return []Finding{newFinding("kernel.smaps_rollup", "kernel", Info, "no smaps_rollup: PSS/USS are summed from smaps").
		ev(src, "absent").ev("/proc/sys/kernel/osrelease", kernel).
		why("smaps_rollup arrived in 4.14. Without it torchmem reads every mapping of every process (a torch process has ~1,800) to get PSS, so it samples PSS less often; RSS of forked DataLoader workers double-counts shared pages.")}
}
