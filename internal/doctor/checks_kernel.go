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
	f := newFinding("vm.swappiness", "kernel", OK, "swappiness.title", n).ev(src, raw)
	if n <= swappinessWant {
		return []Finding{f}
	}
	f.Severity = Warn
	if m, err := h.meminfo(); err == nil && m.SwapTotalBytes != nil && *m.SwapTotalBytes == 0 {
		f.Severity = Info // no swap: the value has nothing to act on yet
		f = f.titled("swappiness.title_no_swap", n)
	}
	return []Finding{f.
		why("swappiness.why").fix("swappiness.fix").
		tune("vm.swappiness")}
}

func checkTHP(h *Host) []Finding {
	t, err := procfs.ReadTHP(h.SysRoot)
	src := "/sys/kernel/mm/transparent_hugepage/enabled"
	if err != nil {
		return []Finding{newFinding("thp.enabled", "kernel", Info, "thp.title_unavailable").ev(src, err.Error())}
	}
	en := newFinding("thp.enabled", "kernel", OK, "thp.title", t.Enabled).ev(src, t.Enabled)
	switch t.Enabled {
	case "always":
		en = en.why("thp.always.why").fix("thp.always.fix").
			tune("thp.enabled")
		en.Severity = Warn
	case "never":
		en.Severity = Info
		en = en.why("thp.never.why")
	}
	df := newFinding("thp.defrag", "kernel", OK, "thp.defrag.title", t.Defrag).
		ev("/sys/kernel/mm/transparent_hugepage/defrag", t.Defrag)
	if t.Defrag == "always" {
		df.Severity = Warn
		df = df.why("thp.defrag.why").fix("thp.defrag.fix").
			tune("thp.defrag")
	}
	return []Finding{en, df}
}

func checkOvercommit(h *Host) []Finding {
	mode, raw, src, err := h.sysctlInt("vm/overcommit_memory")
	if err != nil {
		return []Finding{unreadable("vm.overcommit_memory", "kernel", src, err)}
	}
	f := newFinding("vm.overcommit_memory", "kernel", OK, "overcommit.title", mode).ev(src, raw)
	if mode != 2 {
		return []Finding{f}
	}
	ratio, rraw, rsrc, _ := h.sysctlInt("vm/overcommit_ratio")
	f = f.ev(rsrc, rraw)
	f.Severity = Fail
	f = f.titled("overcommit.title_strict", mode, ratio)
	return []Finding{f.why("overcommit.why").fix("overcommit.fix").
		tune("vm.overcommit_memory")}
}

func checkMinFree(h *Host) []Finding {
	n, raw, src, err := h.sysctlInt("vm/min_free_kbytes")
	if err != nil {
		return []Finding{unreadable("vm.min_free_kbytes", "kernel", src, err)}
	}
	f := newFinding("vm.min_free_kbytes", "kernel", OK, "min_free.title", n, units.Bytes(n*1024)).ev(src, raw)
	if total := h.memTotal(); total >= minFreeBigHost && n < minFreeKBWant {
		f.Severity = Warn
		f = f.why("min_free.why").fix("min_free.fix", minFreeKBWant).
			tune("vm.min_free_kbytes")
	}
	return []Finding{f}
}

func checkPSI(h *Host) []Finding {
	const src = "/proc/pressure/memory"
	if psiPresent(h) {
		return []Finding{newFinding("psi", "kernel", OK, "psi.title").evMsg(src, "ev.present")}
	}
	kernel, _, _ := h.procFile("sys/kernel/osrelease")
	cmdline, csrc, _ := h.procFile("cmdline")
	f := newFinding("psi", "kernel", Info, "psi.title_absent").evMsg(src, "ev.absent").ev("/proc/sys/kernel/osrelease", kernel)
	if kernelBefore(kernel, 4, 20) {
		return []Finding{f.why("psi.old_kernel.why", kernel)}
	}
	f = f.ev(csrc, psiArg(cmdline))
	return []Finding{f.
		why("psi.off.why").fix("psi.off.fix")}
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
		return []Finding{newFinding("oom.history", "kernel", Info, "oom_history.title_unknown").
			evMsg(src, "ev.no_oom_kill_line").fix("oom_history.unknown.fix")}
	}
	v := strconv.FormatUint(*n, 10)
	f := newFinding("oom.history", "kernel", OK, "oom_history.title_none").ev(src, "oom_kill "+v)
	if *n == 0 {
		return []Finding{f}
	}
	f.Severity = Warn
	return []Finding{f.titled("oom_history.title", v).why("oom_history.why").fix("oom_history.fix")}
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
	f := newFinding(id, cat, Info, "unreadable.title", id)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return f.evMsg(src, "ev.missing")
	case err != nil:
		return f.ev(src, err.Error())
	}
	return f.evMsg(src, "ev.unreadable")
}

// checkSmapsRollup: kernels before 4.14 have no smaps_rollup, so PSS and
// USS cost a walk of every mapping's smaps lines.
func checkSmapsRollup(h *Host) []Finding {
	_, src, err := h.procFile("self/smaps_rollup")
	if err == nil {
		return []Finding{newFinding("kernel.smaps_rollup", "kernel", OK, "smaps_rollup.title").evMsg(src, "ev.present")}
	}
	kernel, _, _ := h.procFile("sys/kernel/osrelease")
	return []Finding{newFinding("kernel.smaps_rollup", "kernel", Info, "smaps_rollup.title_absent").
		evMsg(src, "ev.absent").ev("/proc/sys/kernel/osrelease", kernel).
		why("smaps_rollup.why")}
}
