package oomexplain

import (
	"fmt"
	"strings"
)

const (
	kib = int64(1) << 10
	mib = int64(1) << 20
	gib = int64(1) << 30
)

// explainCUDA explains an allocator OOM (caching allocator or
// cudaMallocAsync): the verdict from cudaVerdict, the numbers behind it,
// and advice that names its evidence and fits the PyTorch version the
// message format proves.
func explainCUDA(inc *Incident, ctx Context) finding {
	c := inc.CUDA
	f := factsOf(c)
	v, alts := cudaVerdict(f)
	fd := finding{verdict: v, alts: alts, summary: cudaSummary(v, f)}
	fd.note(cudaArithmetic(c, f)...)
	fd.note(cudaVerdictArithmetic(v, f)...)
	if len(alts) > 0 {
		fd.note(msg("alternatives", verdictList(alts)))
	}
	cudaAdvice(&fd, v, f, c, ctx)
	for _, a := range alts {
		cudaAltAdvice(&fd, a, f, c, ctx)
	}
	fd.note(hookLines(ctx)...)
	return fd
}

func verdictList(vs []Verdict) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}

// cudaSummary is the one sentence for verdict v.
func cudaSummary(v Verdict, f cudaFacts) Msg {
	switch v {
	case VerdictGPUOOM:
		if f.req >= 0 && f.roomy() {
			return msg("cuda.summary.roomy", b(f.free), b(f.req))
		}
		return msg("cuda.summary.no_numbers")
	case VerdictRequestTooLarge:
		return msg("cuda.summary.too_large", b(f.req), b(f.total))
	case VerdictMemoryFraction:
		if c, ok := inferredCap(f); ok && f.allowed < 0 {
			return msg("cuda.summary.fraction_inferred", b(f.held()), b(f.req), b(c), pct(c, f.total), b(f.free))
		}
		return msg("cuda.summary.fraction", b(f.allowed), b(max(f.alloc, 0)), b(f.req))
	case VerdictOtherProcesses:
		if len(f.others) > 0 {
			return msg("cuda.summary.others_listed", b(f.elsewhere()), b(f.req))
		}
		if f.selfExtra() >= 0 {
			return msg("cuda.summary.others_unlisted", b(f.elsewhere()), b(f.req))
		}
		return msg("cuda.summary.outside_unknown", b(f.elsewhere()+contextAllowance), b(f.req))
	case VerdictOutsidePyTorch:
		return msg("cuda.summary.outside_self", b(f.selfExtra()), b(f.req))
	case VerdictFragmentation:
		if f.async {
			return msg("cuda.summary.async_gap", b(max(0, f.total-f.free-f.alloc)), b(f.req))
		}
		return msg("cuda.summary.fragmentation", b(f.unalloc), b(f.req), pctF(f.fill()))
	}
	if f.fill() >= 0 {
		return msg("cuda.summary.does_not_fit", pctF(f.fill()), b(f.reachable()))
	}
	return msg("cuda.summary.does_not_fit_plain")
}

// cudaArithmetic shows the numbers as the message gives them and the
// sums that matter.
func cudaArithmetic(c *CUDAOOM, f cudaFacts) []Msg {
	var out []Msg
	dev := "?"
	if c.Device != nil {
		dev = itoa(*c.Device)
	}
	switch {
	case f.req >= 0 && f.free >= 0 && f.free < f.req:
		out = append(out, msg("cuda.arith.short", b(f.req), dev, b(f.free), sizeOrUnknown(f.total), b(f.req-f.free)))
	case f.req >= 0 && f.free >= 0:
		out = append(out, msg("cuda.arith.room", b(f.req), dev, b(f.free), sizeOrUnknown(f.total)))
	case f.req >= 0:
		out = append(out, msg("cuda.arith.request", b(f.req), dev))
	}
	switch {
	case f.alloc >= 0 && f.unalloc >= 0 && !f.async:
		out = append(out, msg("cuda.arith.pytorch", b(f.alloc), b(f.unalloc), b(f.alloc+f.unalloc)))
	case f.alloc >= 0:
		out = append(out, msg("cuda.arith.allocated", b(f.alloc)))
	}
	if s := f.selfExtra(); s >= 0 {
		out = append(out, msg("cuda.arith.process", b(f.proc), b(f.reserved), b(s)))
	}
	if c.PrivatePoolBytes != nil {
		out = append(out, msg("cuda.arith.private_pools", b(*c.PrivatePoolBytes)))
	}
	if f.allowed >= 0 {
		out = append(out, msg("cuda.arith.cap", b(f.allowed), b(max(f.alloc, 0)+f.req)))
	}
	if len(f.others) > 0 {
		out = append(out, msg("cuda.arith.others", processList(f.others, nil), b(f.othersBytes)))
	}
	out = append(out, msg("cuda.arith.version", f.version.String(), formatName(c.Format)))
	return out
}

// cudaVerdictArithmetic adds the sum the verdict rests on.
func cudaVerdictArithmetic(v Verdict, f cudaFacts) []Msg {
	switch v {
	case VerdictOtherProcesses, VerdictOutsidePyTorch:
		if out := f.outside(); out >= 0 && !f.async {
			return []Msg{msg("cuda.arith.outside", b(f.total), b(f.free), b(f.held()), b(out))}
		}
	case VerdictFragmentation, VerdictDoesNotFit:
		if f.fill() >= 0 {
			return []Msg{msg("cuda.arith.fill", b(max(f.alloc, 0)), b(f.req), b(f.reachable()), pctF(f.fill()))}
		}
	}
	return nil
}

func formatName(format string) string {
	if format == "" {
		return "?"
	}
	return format
}

func sizeOrUnknown(n int64) string {
	if n < 0 {
		return "?"
	}
	return b(n)
}

func pctF(x float64) string {
	if x < 0 {
		return "?"
	}
	return fmt.Sprintf("%.0f%%", 100*x)
}

func processList(ps []GPUProcess, named []GPUProcess) string {
	var parts []string
	for _, p := range ps {
		name := p.Name
		for _, q := range named {
			if q.PID == p.PID && q.Name != "" {
				name = q.Name
			}
		}
		if name != "" {
			parts = append(parts, fmt.Sprintf("pid %d (%s) %s", p.PID, name, b(p.Bytes)))
		} else {
			parts = append(parts, fmt.Sprintf("pid %d %s", p.PID, b(p.Bytes)))
		}
	}
	return strings.Join(parts, ", ")
}

// hookLines adds what the in-process hook measured, when the run had it.
func hookLines(ctx Context) []Msg {
	st := ctx.MemoryStats
	var out []Msg
	if v, ok := st["allocated_bytes.all.peak"]; ok {
		out = append(out, msg("hook.peak_allocated", b(v)))
	}
	if v, ok := st["reserved_bytes.all.peak"]; ok {
		out = append(out, msg("hook.peak_reserved", b(v)))
	}
	if v, ok := st["num_alloc_retries"]; ok && v > 0 {
		out = append(out, msg("hook.retries", fmt.Sprint(v)))
	}
	return out
}

// explainCUDAOther covers failures outside the caching allocator: the
// message has no numbers, so the verdict is gpu_oom and the advice is
// about the component that failed.
func explainCUDAOther(inc *Incident, ctx Context) finding {
	fd := finding{verdict: VerdictGPUOOM}
	why := msg("because.component_failed", string(inc.Kind))
	switch inc.Kind {
	case KindCUBLASAlloc:
		fd.summary = msg("cuda.summary.cublas")
		fd.doAll(why, adviceMsg("batch"), adviceMsg("headroom_fraction"), adviceMsg("cublas_workspace"))
	case KindNCCLOOM:
		fd.summary = msg("cuda.summary.nccl")
		fd.doAll(why, adviceMsg("nccl_early"), adviceMsg("nccl_buffers"), adviceMsg("batch"))
	default:
		fd.summary = msg("cuda.summary.cuda_error")
		fd.doAll(why, adviceMsg("startup_gpu_busy"), adviceMsg("launch_blocking"), adviceMsg("batch"))
	}
	if len(ctx.GPUProcesses) > 0 {
		fd.note(msg("cuda.arith.nvml_processes", processList(ctx.GPUProcesses, nil)))
	}
	return fd
}
