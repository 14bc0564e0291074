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
		"RLIMIT_NPROC counts every thread of the user. Each rank and each DataLoader worker runs dozens of threads (OpenMP, CUDA, pin-memory), so CentOS's default 4096 (or 1024) ends in 'RuntimeError: can't start new thread' or 'fork: Resource temporarily unavailable' once workers x ranks grows.",
		"Raise it in /etc/security/limits.d/90-torchmem.conf ('* soft nproc 65536' / '* hard nproc 65536', torchmem tune apply) and log in again; for services, LimitNPROC= in the unit.",
		"limits.nproc")
}

func checkNofile(h *Host) []Finding {
	return rlimitFinding(h, "ulimit.nofile", "Max open files", "ulimit -n", nofileFail, nofileWarn,
		"DataLoader workers hand tensors to the main process through shared memory; with the default file_descriptor strategy each tensor in flight holds an open fd, and the limit ends in 'received 0 items of ancdata' or 'Too many open files'.",
		"Raise it in /etc/security/limits.d/90-torchmem.conf ('* soft nofile 65536', torchmem tune apply), or use torch.multiprocessing.set_sharing_strategy('file_system').",
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
	f := newFinding(id, "limits", OK, fmt.Sprintf("%s is %s (soft), %s (hard)", shell, procfs.FormatLimit(r.Soft), procfs.FormatLimit(r.Hard))).
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
	f := newFinding("ulimit.memlock", "limits", OK, "ulimit -l (locked memory) is "+val).
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
		why("NCCL over InfiniBand/RoCE and GPUDirect RDMA register (lock) buffers; a limited memlock makes NCCL fail with 'ibv_reg_mr failed' or fall back to slow paths. Pinned host memory (pin_memory=True) itself is locked by the CUDA driver and does not need it.").
		fix("'* soft memlock unlimited' and '* hard memlock unlimited' in /etc/security/limits.d/90-torchmem.conf (torchmem tune apply); LimitMEMLOCK=infinity for services; --ulimit memlock=-1 for containers.").
		tune("limits.memlock")}
}

func checkShm(h *Host) []Finding {
	mi, src, err := h.procFile("self/mountinfo")
	if err != nil {
		return []Finding{unreadable("dev.shm", "limits", src, err)}
	}
	m := shm.ParseMount(mi, h.memTotal())
	if !m.Mounted {
		return []Finding{newFinding("dev.shm", "limits", Fail, m.Title()).ev(src, "no /dev/shm mount").
			why("DataLoader workers pass every batch through POSIX shared memory in /dev/shm.").
			fix("mount -t tmpfs -o size=50% tmpfs /dev/shm (and an fstab line), or --shm-size / --ipc=host for containers.")}
	}
	f := newFinding("dev.shm", "limits", OK, m.Title()).ev(src, "/dev/shm tmpfs "+m.Options+" ("+m.How+")")
	switch m.Judge(h.memTotal()) {
	case shm.Enough:
		return []Finding{f}
	case shm.TooSmall:
		f.Severity = Fail
	default:
		f.Severity = Warn
	}
	return []Finding{f.
		why("DataLoader workers put each batch in /dev/shm until the main process takes it: num_workers x prefetch_factor batches at once. Too small and workers die with 'bus error' / 'unable to write to file </torch_…>: No space left on device' / 'insufficient shared memory (shm)' — containers default to 64 MB.").
		fix("Containers: docker run --shm-size=16g (or --ipc=host), Kubernetes: an emptyDir with medium: Memory at /dev/shm. Hosts: a systemd drop-in for dev-shm.mount (Options=size=50%) or 'tmpfs /dev/shm tmpfs defaults,size=50% 0 0' in /etc/fstab, then mount -o remount /dev/shm yourself. torchmem tune writes the drop-in, never remounts.").
		tune("dev.shm")}
}

func checkPidMax(h *Host) []Finding {
	n, raw, src, err := h.sysctlInt("kernel/pid_max")
	if err != nil {
		return []Finding{unreadable("kernel.pid_max", "limits", src, err)}
	}
	tm, traw, tsrc, _ := h.sysctlInt("kernel/threads-max")
	f := newFinding("kernel.pid_max", "limits", OK, fmt.Sprintf("kernel.pid_max is %d, threads-max %d", n, tm)).ev(src, raw).ev(tsrc, traw)
	if n >= pidMaxWarn {
		return []Finding{f}
	}
	f.Severity = Warn
	return []Finding{f.
		why("Every thread takes a PID. 8 ranks x 16 DataLoader workers x ~40 threads is ~5,000 PIDs per job; with 32768 a busy host runs out and fork/clone fail with EAGAIN.").
		fix("sysctl -w kernel.pid_max=4194304, persisted in /etc/sysctl.d/90-torchmem.conf (torchmem tune apply).").
		tune("kernel.pid_max")}
}
