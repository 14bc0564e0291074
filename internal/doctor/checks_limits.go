package doctor

import (
	"fmt"

	"github.com/torchmem/torchmem/internal/procfs"
	"github.com/torchmem/torchmem/internal/shm"
	"github.com/torchmem/torchmem/internal/units"
)

// Thresholds of the limit checks.
const (
	// nprocWarn: RLIMIT_NPROC counts threads of the user. One rank with 8
	// DataLoader workers runs ~9 x 40 threads; 8 ranks need ~3,000.
	nprocFail = 1024
	nprocWarn = 16384
	// nofileWarn: DataLoader's file_descriptor sharing strategy keeps an fd
	// open per shared tensor in flight.
	nofileFail = 1024
	nofileWarn = 4096
	// The /dev/shm sizes are judged by internal/shm (Mount.Judge), which
	// tune's advice shares.
	pidMaxWarn = 65536
)

func checkNproc(h *Host) []Finding {
	return rlimitFinding(h, "ulimit.nproc", "Max processes", "ulimit -u", nprocFail, nprocWarn,
		"nproc.why", "nproc.fix",
		"limits.nproc")
}

func checkNofile(h *Host) []Finding {
	return rlimitFinding(h, "ulimit.nofile", "Max open files", "ulimit -n", nofileFail, nofileWarn,
		"nofile.why", "nofile.fix",
		"limits.nofile")
}

func rlimitFinding(h *Host, id, name, shell string, fail, warn int64, why, fix, tune string) []Finding {
	l := h.limits()
	if l.err != nil {
		return []Finding{unreadable(id, "limits", l.shown, l.err)}
	}
	r, ok := l.m[name]
	if !ok {
		return []Finding{unreadable(id, "limits", l.shown, fmt.Errorf("no %q line", name))}
	}
	f := newFinding(id, "limits", OK, "rlimit.title", shell, procfs.FormatLimit(r.Soft), procfs.FormatLimit(r.Hard)).
		ev(l.shown, fmt.Sprintf("%s: soft %s, hard %s", name, procfs.FormatLimit(r.Soft), procfs.FormatLimit(r.Hard)))
	switch {
	case r.Soft == procfs.Unlimited || r.Soft >= warn:
		return []Finding{f}
	case r.Soft <= fail:
		f.Severity = Fail
	default:
		f.Severity = Warn
	}
	return []Finding{f.why(why).fix(fix).tune(tune)}
}

func checkMemlock(h *Host) []Finding {
	l := h.limits()
	if l.err != nil {
		return []Finding{unreadable("ulimit.memlock", "limits", l.shown, l.err)}
	}
	r := l.m["Max locked memory"]
	val := procfs.FormatLimit(r.Soft)
	if r.Soft != procfs.Unlimited {
		val = units.Bytes(r.Soft)
	}
	f := newFinding("ulimit.memlock", "limits", OK, "memlock.title", val).
		ev(l.shown, "Max locked memory: soft "+procfs.FormatLimit(r.Soft)+", hard "+procfs.FormatLimit(r.Hard))
	if r.Soft == procfs.Unlimited {
		return []Finding{f}
	}
	if len(h.gpus().devs) > 0 || dirExists(h.SysRoot, "class/infiniband") {
		f.Severity = Warn
	} else {
		f.Severity = Info
	}
	return []Finding{f.
		why("memlock.why").fix("memlock.fix").
		tune("limits.memlock")}
}

func checkShm(h *Host) []Finding {
	mi, src, err := h.procFile("self/mountinfo")
	if err != nil {
		return []Finding{unreadable("dev.shm", "limits", src, err)}
	}
	m := shm.ParseMount(mi, h.memTotal())
	if !m.Mounted {
		return []Finding{newFinding("dev.shm", "limits", Fail, "shm.title_unmounted").evMsg(src, "ev.no_shm_mount").
			why("shm.unmounted.why").fix("shm.unmounted.fix")}
	}
	f := newFinding("dev.shm", "limits", OK, "shm.title", units.Bytes(m.SizeBytes)).ev(src, "/dev/shm tmpfs "+m.Options+" ("+m.How+")")
	switch m.Judge(h.memTotal()) {
	case shm.Enough:
		return []Finding{f}
	case shm.TooSmall:
		f.Severity = Fail
	default:
		f.Severity = Warn
	}
	return []Finding{f.
		why("shm.why").fix("shm.fix").
		tune("dev.shm")}
}

func checkPidMax(h *Host) []Finding {
	n, raw, src, err := h.sysctlInt("kernel/pid_max")
	if err != nil {
		return []Finding{unreadable("kernel.pid_max", "limits", src, err)}
	}
	tm, traw, tsrc, _ := h.sysctlInt("kernel/threads-max")
	f := newFinding("kernel.pid_max", "limits", OK, "pid_max.title", n, tm).ev(src, raw).ev(tsrc, traw)
	if n >= pidMaxWarn {
		return []Finding{f}
	}
	f.Severity = Warn
	return []Finding{f.
		why("pid_max.why").fix("pid_max.fix").
		tune("kernel.pid_max")}
}
