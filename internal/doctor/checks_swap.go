package doctor

import (
	"fmt"

	"github.com/torchmem/torchmem/internal/units"
)

// Swap sizing for a host that runs PyTorch jobs. Swap there is not
// capacity: it is a buffer that turns an instant OOM kill into a slowdown
// that `torchmem run` sees (PSI, the swap peak) and can act on, for the
// idle anonymous memory of a job (a DataLoader worker's dataset copy, the
// optimizer state of a paused rank). More than that lets a leaking job
// thrash for minutes before its kill. A GPU host keeps its hot data in
// GPU memory and pinned (unswappable) host buffers, so it needs less.
const (
	swapMinBytes    = 2 << 30 // below this a buffer buffers nothing
	swapGPULoDiv    = 64      // GPU host: RAM/64 .. RAM/16
	swapGPUHiDiv    = 16
	swapGPUMaxLo    = 8 << 30 // and at most 8 .. 32 GiB
	swapGPUMaxHi    = 32 << 30
	swapCPULoDiv    = 32 // CPU host: RAM/32 .. RAM/8
	swapCPUHiDiv    = 8
	swapCPUMaxLo    = 16 << 30 // and at most 16 .. 64 GiB
	swapCPUMaxHi    = 64 << 30
	swapSmallFactor = 0.5 // less than half the low end is "small"
	swapLargeFactor = 2.0 // more than twice the high end is "large"
	swapMinHiBytes  = 4 << 30
)

// swapAdvice is the swap size range advised for ram bytes of RAM, on a
// host with GPUs or without (pure, table-tested).
func swapAdvice(ram uint64, gpuHost bool) (lo, hi uint64) {
	clamp := func(v, minV, maxV uint64) uint64 { return max(minV, min(v, maxV)) }
	if gpuHost {
		return clamp(ram/swapGPULoDiv, swapMinBytes, swapGPUMaxLo), clamp(ram/swapGPUHiDiv, swapMinHiBytes, swapGPUMaxHi)
	}
	return clamp(ram/swapCPULoDiv, swapMinBytes, swapCPUMaxLo), clamp(ram/swapCPUHiDiv, swapMinHiBytes, swapCPUMaxHi)
}

// gibs rounds to whole GiB for advice (never below 1).
func gibs(b uint64) uint64 { return max(1, (b+(1<<29))>>30) }

func gib(b uint64) string { return fmt.Sprintf("%d GiB", gibs(b)) }

func checkSwap(h *Host) []Finding {
	m, err := h.meminfo()
	if err != nil || m.SwapTotalBytes == nil || m.SwapFreeBytes == nil {
		return []Finding{unreadable("swap", "kernel", "/proc/meminfo", err)}
	}
	total, free := *m.SwapTotalBytes, *m.SwapFreeBytes
	zs, zsrc, zerr := h.sysFile("module/zswap/parameters/enabled")
	f := newFinding("swap", "kernel", OK, "").ev("/proc/meminfo", fmt.Sprintf("SwapTotal %s, SwapFree %s", units.Bytes(int64(total)), units.Bytes(int64(free))))
	if zerr == nil {
		f = f.ev(zsrc, zs)
	}
	zswap := zerr == nil && (zs == "Y" || zs == "1")
	ram, gpuHost := h.memTotal(), len(h.gpus().devs) > 0
	lo, hi := swapAdvice(ram, gpuHost)
	host := "a CPU host"
	if gpuHost {
		host = "a GPU host"
	}
	advice := fmt.Sprintf("%d–%d GiB for %s RAM on %s", gibs(lo), gibs(hi), units.Bytes(int64(ram)), host)
	if ram > 0 {
		f = f.ev("advised swap (MemTotal, GPU count)", advice)
	}
	used := fmt.Sprintf("swap %s, %s in use", units.Bytes(int64(total)), units.Bytes(int64(total-free)))
	switch {
	case total == 0:
		f.Severity, f.Title = Info, "no swap"
		f = f.why("Without swap a job that outgrows RAM is OOM-killed at once; with a little swap (and low swappiness) it slows down first, which torchmem run can see and act on. Swap here is a buffer, not capacity: a few GiB, not the size of RAM.")
		if ram > 0 {
			f.Title += " (advised: " + advice + ")"
			f = f.fix(fmt.Sprintf("fallocate -l %dG /swapfile && chmod 600 /swapfile && mkswap /swapfile && swapon /swapfile, add '/swapfile none swap sw 0 0' to /etc/fstab, and keep vm.swappiness at 10 (torchmem tune apply).", gibs(lo)))
		}
	case float64(total-free) > swapUsedWarnFrac*float64(total):
		f.Severity, f.Title = Warn, used
		f = f.why("More than half of swap is in use: memory is over-committed and jobs are paying for swap-in on their hot path.").
			fix("Find the holders (torchmem top, smem -s swap) and lower their memory, or add RAM.")
	case ram > 0 && float64(total) < swapSmallFactor*float64(lo):
		f.Severity, f.Title = Info, used+" (small: advised "+advice+")"
		f = f.why("A swap much smaller than the advised buffer fills within seconds of a job outgrowing RAM, so the slowdown before the OOM kill is too short to see or act on.").
			fix(fmt.Sprintf("Add a swap file to reach about %s (fallocate, mkswap, swapon, /etc/fstab).", gib(lo)))
	case ram > 0 && float64(total) > swapLargeFactor*float64(hi):
		f.Severity, f.Title = Info, used+" (large: advised "+advice+")"
		f = f.why("With this much swap a job that leaks host memory thrashes for minutes (every step stalling on swap-in) before the OOM killer acts, and other jobs on the host slow down with it.").
			fix("Cap each job's swap instead of shrinking the host's: torchmem run --memory-max SIZE --swap-max 2G (cgroup v2 memory.swap.max); or swapoff and recreate it at about " + gib(hi) + ".")
	default:
		f.Title = used
	}
	if zswap {
		f.Title += ", zswap on"
	}
	return []Finding{f}
}
