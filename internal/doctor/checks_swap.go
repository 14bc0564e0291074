package doctor

import (
	"fmt"

	"github.com/torchmem/torchmem/internal/i18n"

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

func gib(b uint64) string { return fmt.Sprintf("%d GiB", gibs(b)) } // a unit, the same in every language

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
	host := "swap.cpu_host"
	if gpuHost {
		host = "swap.gpu_host"
	}
	advice := word("swap.advice", gibs(lo), gibs(hi), units.Bytes(int64(ram)), word(host))
	if ram > 0 {
		f.Evidence = append(f.Evidence, Evidence{Source: en("ev.advised_swap"), Value: advice.in(i18n.EN), source: word("ev.advised_swap"), value: advice})
	}
	used := word("swap.used", units.Bytes(int64(total)), units.Bytes(int64(total-free)))
	var title msg
	switch {
	case total == 0:
		f.Severity, title = Info, word("swap.none")
		f = f.why("swap.none.why")
		if ram > 0 {
			title = word("swap.none_advised", advice)
			f = f.fix("swap.none.fix", gibs(lo))
		}
	case float64(total-free) > swapUsedWarnFrac*float64(total):
		f.Severity, title = Warn, used
		f = f.why("swap.full.why").fix("swap.full.fix")
	case ram > 0 && float64(total) < swapSmallFactor*float64(lo):
		f.Severity, title = Info, word("swap.small", used, advice)
		f = f.why("swap.small.why").fix("swap.small.fix", gib(lo))
	case ram > 0 && float64(total) > swapLargeFactor*float64(hi):
		f.Severity, title = Info, word("swap.large", used, advice)
		f = f.why("swap.large.why").fix("swap.large.fix", gib(hi))
	default:
		title = used
	}
	if zswap {
		title = word("swap.zswap", title)
	}
	return []Finding{f.titled(title.id, title.args...)}
}
