package oomexplain

import (
	"strconv"
	"strings"
)

// Thresholds of the CUDA rules (cuda_rules.go), with why.
const (
	// contextAllowance is what a process normally holds on the GPU outside
	// PyTorch's cache: the CUDA context with its module images (~0.5 GiB
	// for torch 2.11 on an H200, measured: shared/fixtures calibration
	// "_context" row), cuBLAS/cuDNN workspaces and NCCL buffers bring it to
	// 1–1.5 GiB. Memory held outside the cache beyond this is someone
	// else's (other processes) or a non-PyTorch library's.
	contextAllowance = 3 * gib / 2
	// elsewhereMinBytes and elsewhereMinShare: memory held elsewhere is
	// blamed only when it is at least this much (1 GiB, or 5% of the GPU):
	// smaller amounts are noise in the two-decimal printout and contexts.
	elsewhereMinBytes = gib
	elsewhereMinShare = 0.05
	// fragmentationFill: the cache's slack is the cause only when live
	// tensors plus the request take at most 85% of what PyTorch could
	// reach; doesNotFitFill: above 95% the tensors fill the GPU whatever
	// the allocator does. Between the two both are named.
	fragmentationFill = 0.85
	doesNotFitFill    = 0.95
	// roomyMinHeadroom: the device "had room" only with real headroom:
	// CUDA rounds requests up (2 MiB pages, 20 MiB segments) and needs
	// memory of its own, so 371 MiB free for 336 MiB is full.
	roomyMinHeadroom = 128 * mib
	// capSlack: PyTorch rounds a request up before comparing it with the
	// memory-fraction cap, so live + request within this of the cap is at it.
	capSlack = 2 * mib
	// largeSlackShare: between the two fills, a slack of a quarter of
	// what PyTorch could reach makes fragmentation the first suspect.
	largeSlackShare = 0.25
	// capSteps: memory fractions are inferred in steps of 1/20 (5%).
	capSteps = 20
	// largeRequestShare: one request above half of what PyTorch could
	// reach is worth a look at the shapes.
	largeRequestShare = 0.5
)

// cudaFacts are an incident's sizes with "unknown" as -1, and what
// follows from them.
type cudaFacts struct {
	req, total, free, alloc, reserved, unalloc, proc, allowed int64
	// others: processes the message lists besides this one, and their sum.
	others      []GPUProcess
	othersBytes int64
	async       bool
	version     torchVersion
}

func factsOf(c *CUDAOOM) cudaFacts {
	get := func(p *int64) int64 {
		if p == nil {
			return -1
		}
		return *p
	}
	f := cudaFacts{req: get(c.RequestedBytes), total: get(c.TotalBytes), free: get(c.FreeBytes),
		alloc: get(c.AllocatedBytes), reserved: get(c.ReservedBytes), unalloc: get(c.ReservedUnallocatedBytes),
		proc: get(c.ProcessBytes), allowed: get(c.AllowedBytes), async: c.Format == "cudaMallocAsync",
		version: versionOf(c)}
	if f.unalloc < 0 && f.reserved >= 0 && f.alloc >= 0 {
		f.unalloc = max(0, f.reserved-f.alloc)
	}
	if f.reserved < 0 && f.alloc >= 0 && f.unalloc >= 0 {
		f.reserved = f.alloc + f.unalloc
	}
	for _, p := range c.OtherProcesses {
		if c.PID != nil && p.PID == *c.PID {
			continue
		}
		f.others = append(f.others, p)
		f.othersBytes += p.Bytes
	}
	return f
}

// held is what this process's PyTorch holds (reserved, or allocated when
// reserved is not printed, or at most the process's whole use when only
// that survived a mangled paste); -1 when unknown.
func (f cudaFacts) held() int64 {
	if f.reserved < 0 && f.alloc < 0 {
		return f.proc
	}
	return max(f.reserved, f.alloc)
}

// outside is the GPU memory in use that is not this process's PyTorch
// cache: its CUDA context and libraries, and other processes.
func (f cudaFacts) outside() int64 {
	if f.total < 0 || f.free < 0 || f.held() < 0 {
		return -1
	}
	return max(0, f.total-f.free-f.held())
}

// selfExtra is this process's memory outside PyTorch's cache, when the
// message prints the process's total (2.1+); -1 otherwise.
func (f cudaFacts) selfExtra() int64 {
	if f.proc < 0 || f.reserved < 0 {
		return -1
	}
	return max(0, f.proc-f.reserved)
}

// elsewhere is the memory held by other processes (or, when the message
// cannot tell, by anything but this process's cache and a normal
// context); -1 when unknown.
func (f cudaFacts) elsewhere() int64 {
	out := f.outside()
	if out < 0 {
		return f.othersBytes
	}
	if self := f.selfExtra(); self >= 0 {
		return max(f.othersBytes, out-self)
	}
	return max(f.othersBytes, out-contextAllowance)
}

// elsewhereMatters: enough memory held elsewhere to be worth blaming.
func (f cudaFacts) elsewhereMatters(e int64) bool {
	return e >= elsewhereMinBytes && (f.total < 0 || float64(e) >= elsewhereMinShare*float64(f.total))
}

// reachable is what PyTorch could have used: its own cache plus what was
// free on the device, and never more than the memory-fraction cap.
func (f cudaFacts) reachable() int64 {
	if f.async && f.total > 0 {
		// The pool's cache is not printed: the GPU less a context.
		r := f.total - contextAllowance
		if f.allowed >= 0 {
			r = min(r, f.allowed)
		}
		return r
	}
	if f.free < 0 || f.held() < 0 {
		if f.allowed >= 0 {
			return f.allowed
		}
		return -1
	}
	r := f.free + f.held()
	if f.allowed >= 0 {
		r = min(r, f.allowed)
	}
	return r
}

// fill is (live tensors + request) / reachable, or -1.
func (f cudaFacts) fill() float64 {
	r := f.reachable()
	if r <= 0 || f.alloc < 0 || f.req < 0 {
		return -1
	}
	return float64(f.alloc+f.req) / float64(r)
}

// newRoom is what a new segment could get: the device's free memory, or
// less under the cap.
func (f cudaFacts) newRoom() int64 {
	room := f.free
	if f.allowed >= 0 && f.held() >= 0 {
		capRoom := max(0, f.allowed-f.held())
		if room < 0 || capRoom < room {
			room = capRoom
		}
	}
	return room
}

// roomy: the device had real headroom for the request.
func (f cudaFacts) roomy() bool {
	return f.req >= 0 && f.free >= f.req+max(roomyMinHeadroom, f.req/10)
}

// torchVersion is the PyTorch version range the message format proves:
// [lo, hi) as "major.minor", empty when unbounded.
type torchVersion struct{ lo, hi string }

// versionOf reads the range from the message generation (cuda_message.go
// names them) and its hints.
func versionOf(c *CUDAOOM) torchVersion {
	switch {
	case c.Format == "2.2+":
		return torchVersion{lo: "2.2"}
	case c.Format == "2.1":
		return torchVersion{lo: "2.1", hi: "2.2"}
	case c.Format == "cudaMallocAsync":
		return torchVersion{lo: "2.0"}
	case c.Format != "pre-2.1":
		return torchVersion{}
	case strings.Contains(c.Message, "max_split_size_mb"):
		// The hint came with PYTORCH_CUDA_ALLOC_CONF in 1.10.
		return torchVersion{lo: "1.10", hi: "2.1"}
	case strings.Contains(c.Message, " cached)"):
		return torchVersion{hi: "1.5"}
	}
	return torchVersion{hi: "2.1"}
}

// known says whether the message tells the version at all.
func (v torchVersion) known() bool { return v.lo != "" || v.hi != "" }

// atLeast: true when the range is wholly at or above x, false when wholly
// below it; unsure otherwise.
func (v torchVersion) atLeast(x string) (yes, sure bool) {
	if v.lo != "" && !versionLess(v.lo, x) {
		return true, true
	}
	if v.hi != "" && !versionLess(x, v.hi) {
		return false, true
	}
	return false, false
}

// String prints the range for people ("2.1", ">= 2.2", "< 2.1").
func (v torchVersion) String() string {
	switch {
	case v.lo != "" && v.hi != "":
		if v.lo == "2.1" && v.hi == "2.2" {
			return "2.1"
		}
		return v.lo + "–" + v.hi
	case v.lo != "":
		return ">= " + v.lo
	case v.hi != "":
		return "< " + v.hi
	}
	return "unknown"
}

// versionLess compares "major.minor" strings numerically.
func versionLess(a, b string) bool {
	am, an := splitVersion(a)
	bm, bn := splitVersion(b)
	return am < bm || am == bm && an < bn
}

func splitVersion(s string) (int, int) {
	maj, min, _ := strings.Cut(s, ".")
	a, _ := strconv.Atoi(maj) // the ranges are this file's literals
	b, _ := strconv.Atoi(min)
	return a, b
}
