package oomexplain

import (
	"fmt"
	"strings"
)

const (
	adviceExpandable = "set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (PyTorch >= 2.1; older: max_split_size_mb:128) so cached blocks can grow instead of fragmenting"
	adviceBatch      = "lower the batch size (or sequence length), and keep the effective batch with gradient accumulation"
	adviceAMP        = "train in mixed precision (torch.autocast with bfloat16/float16), which halves activation memory"
	adviceCkpt       = "use activation checkpointing (torch.utils.checkpoint) on the large blocks to trade compute for memory"
	adviceEstimate   = "estimate the peak beforehand with `torchmem estimate` to find the largest batch that fits"
	adviceShard      = "shard parameters, gradients and optimizer state across GPUs (FSDP / ZeRO) or use an 8-bit optimizer"
)

const (
	kib = int64(1) << 10
	mib = int64(1) << 20
	gib = int64(1) << 30
)

// cudaNumbers are the incident's sizes with "unknown" as -1.
type cudaNumbers struct{ req, total, free, alloc, reserved, unalloc, proc, allowed, others int64 }

func numbersOf(c *CUDAOOM) cudaNumbers {
	get := func(p *int64) int64 {
		if p == nil {
			return -1
		}
		return *p
	}
	n := cudaNumbers{get(c.RequestedBytes), get(c.TotalBytes), get(c.FreeBytes), get(c.AllocatedBytes),
		get(c.ReservedBytes), get(c.ReservedUnallocatedBytes), get(c.ProcessBytes), get(c.AllowedBytes), 0}
	for _, p := range c.OtherProcesses {
		n.others += p.Bytes
	}
	return n
}

// explainCUDA applies the rules in order: a request bigger than the GPU;
// fragmentation (the cache's free bytes would have fit the request); other
// processes holding what was missing; a memory-fraction cap; else the job
// does not fit.
func explainCUDA(inc *Incident, ctx Context) Explanation {
	c := inc.CUDA
	n := numbersOf(c)
	e := Explanation{Arithmetic: cudaArithmetic(c, n)}
	// The device "had room" only with real headroom: CUDA rounds requests
	// up and needs memory of its own, so 371 MiB free for 336 MiB is full.
	roomy := n.free >= n.req+max(128*mib, n.req/10) && n.req >= 0
	outside := n.total - n.free - max(n.reserved, n.alloc) - n.others
	switch {
	case n.req < 0:
		e.Verdict, e.Summary = VerdictGPUOOM, "the GPU ran out of memory (the message gives no numbers)"
		e.Recommendations = []string{adviceBatch, adviceAMP, adviceCkpt}
	case n.total > 0 && n.req > n.total:
		e.Verdict = VerdictRequestTooLarge
		e.Summary = fmt.Sprintf("one allocation of %s is larger than the whole GPU (%s): no allocator setting can satisfy it", b(n.req), b(n.total))
		e.Recommendations = []string{"check the tensor shapes at the failing line: an unintended broadcast, a float64 tensor or a whole-dataset tensor on the GPU are the usual causes", "process the data in chunks", adviceBatch}
	case n.unalloc >= n.req && n.unalloc > 0:
		e.Verdict = VerdictFragmentation
		e.Summary = fmt.Sprintf("PyTorch had %s reserved but unallocated, more than the %s requested, but not in one block: the cache is fragmented", b(n.unalloc), b(n.req))
		e.Recommendations = []string{adviceExpandable, "call torch.cuda.empty_cache() between phases with very different tensor sizes (e.g. after evaluation)", adviceBatch}
	case !roomy && n.others > 0 && n.free >= 0 && n.free+n.others >= n.req:
		e.Verdict = VerdictOtherProcesses
		e.Summary = fmt.Sprintf("other processes held %s of the GPU; without them the %s request would have fit", b(n.others), b(n.req))
		e.Recommendations = otherProcessAdvice(c, ctx)
	case n.allowed >= 0 && roomy:
		e.Verdict = VerdictMemoryFraction
		e.Summary = fmt.Sprintf("the process is capped at %s (torch.cuda.set_per_process_memory_fraction) while the GPU still had %s free", b(n.allowed), b(n.free))
		e.Recommendations = []string{"raise or remove the memory fraction set with torch.cuda.set_per_process_memory_fraction", adviceBatch}
	case roomy:
		e.Verdict, e.Summary = VerdictGPUOOM, fmt.Sprintf("the GPU still had %s free, well above the %s requested: the cap came from elsewhere (a private pool such as CUDA Graphs, or another process allocating at the same moment)", b(n.free), b(n.req))
		e.Recommendations = []string{"check memory held in private pools (CUDA Graphs / torch.compile mode=reduce-overhead) and processes started at the same time", adviceExpandable}
	case n.total > 0 && n.free >= 0 && outside > max(3*gib/2, n.total/10) && n.free+outside >= n.req:
		e.Verdict = VerdictOtherProcesses
		e.Summary = fmt.Sprintf("%s of the GPU was held outside this process's PyTorch memory (other processes, or non-PyTorch allocations in this one); without it the %s request would have fit", b(outside), b(n.req))
		e.Arithmetic = append(e.Arithmetic, fmt.Sprintf("total %s − free %s − PyTorch %s = %s held elsewhere", b(n.total), b(n.free), b(max(n.reserved, n.alloc)), b(outside)))
		e.Recommendations = otherProcessAdvice(c, ctx)
	default:
		e.Verdict = VerdictDoesNotFit
		e.Summary = "the job itself needs more GPU memory than the GPU has: the tensors PyTorch holds fill it"
		e.Recommendations = []string{adviceBatch, adviceAMP, adviceCkpt, adviceShard, adviceEstimate}
	}
	e.Arithmetic = append(e.Arithmetic, hookLines(ctx)...)
	return e
}

// cudaArithmetic shows the numbers and the key sums.
func cudaArithmetic(c *CUDAOOM, n cudaNumbers) []string {
	var out []string
	if n.req >= 0 && n.free >= 0 {
		dev := ""
		if c.Device != nil {
			dev = fmt.Sprintf(" on GPU %d", *c.Device)
		}
		if n.free < n.req {
			out = append(out, fmt.Sprintf("requested %s%s, free %s of %s total: short by %s", b(n.req), dev, b(n.free), b(max(n.total, 0)), b(n.req-n.free)))
		} else {
			out = append(out, fmt.Sprintf("requested %s%s, free %s of %s total: the device itself had room", b(n.req), dev, b(n.free), b(max(n.total, 0))))
		}
	}
	if n.alloc >= 0 {
		s := fmt.Sprintf("PyTorch: allocated %s", b(n.alloc))
		if n.unalloc >= 0 {
			s += fmt.Sprintf(" + reserved but unallocated %s = reserved %s", b(n.unalloc), b(n.alloc+n.unalloc))
		} else if n.reserved >= 0 {
			s += fmt.Sprintf(", reserved %s", b(n.reserved))
		}
		out = append(out, s)
	}
	if n.proc >= 0 && n.reserved >= 0 && n.proc > n.reserved {
		out = append(out, fmt.Sprintf("this process: %s in use = reserved %s + %s outside PyTorch's cache (CUDA context, cuBLAS/cuDNN workspaces, NCCL)", b(n.proc), b(n.reserved), b(n.proc-n.reserved)))
	}
	if c.PrivatePoolBytes != nil {
		out = append(out, fmt.Sprintf("%s of the allocated memory is in private pools (CUDA Graphs)", b(*c.PrivatePoolBytes)))
	}
	if n.allowed >= 0 {
		s := fmt.Sprintf("per-process cap (memory fraction): %s allowed", b(n.allowed))
		if held := max(n.reserved, n.alloc); held >= 0 && n.req >= 0 && held+n.req > n.allowed {
			s += fmt.Sprintf("; reserved %s + request %s = %s, over the cap", b(held), b(n.req), b(held+n.req))
		}
		out = append(out, s)
	}
	if len(c.OtherProcesses) > 0 {
		out = append(out, "other processes on the GPU: "+processList(c.OtherProcesses, nil)+" = "+b(n.others))
	}
	return out
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

func otherProcessAdvice(c *CUDAOOM, ctx Context) []string {
	who := "the other processes"
	if len(c.OtherProcesses) > 0 {
		who += " (" + processList(c.OtherProcesses, ctx.GPUProcesses) + ")"
	} else if len(ctx.GPUProcesses) > 0 {
		who += " (" + processList(ctx.GPUProcesses, nil) + ")"
	}
	return []string{
		"free the GPU from " + who + ", or give each job its own GPU with CUDA_VISIBLE_DEVICES",
		"see who holds it now: `nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv` or `torchmem top`",
	}
}

// hookLines adds what the in-process hook measured, when the run had it.
func hookLines(ctx Context) []string {
	st := ctx.MemoryStats
	if len(st) == 0 {
		return nil
	}
	var out []string
	if v, ok := st["allocated_bytes.all.peak"]; ok {
		out = append(out, "allocator peak allocated (hook): "+b(v))
	}
	if v, ok := st["reserved_bytes.all.peak"]; ok {
		out = append(out, "allocator peak reserved (hook): "+b(v))
	}
	if v, ok := st["num_alloc_retries"]; ok && v > 0 {
		out = append(out, fmt.Sprintf("the allocator freed its cache and retried %d times before: memory pressure was building", v))
	}
	return out
}

// explainCUDAOther covers failures outside the caching allocator.
func explainCUDAOther(inc *Incident, ctx Context) Explanation {
	e := Explanation{Verdict: VerdictGPUOOM}
	switch inc.Kind {
	case KindCUBLASAlloc:
		e.Summary = "cuBLAS could not allocate its workspace: the GPU was (nearly) full when a matrix multiply started"
		e.Recommendations = []string{adviceBatch, "leave headroom outside PyTorch's cache, e.g. torch.cuda.set_per_process_memory_fraction(0.95)", "a smaller cuBLAS workspace: CUBLAS_WORKSPACE_CONFIG=:4096:8"}
	case KindNCCLOOM:
		e.Summary = "NCCL could not allocate GPU memory for its communication buffers"
		e.Recommendations = []string{"create the process group (and run a first collective) before allocating the model, so NCCL's buffers are reserved early", "shrink NCCL's buffers: NCCL_BUFFSIZE=4194304; on NVSwitch systems NCCL_NVLS_ENABLE=0 saves several GiB per GPU", adviceBatch}
	default:
		e.Summary = "a CUDA call outside PyTorch's caching allocator ran out of memory (CUDA context creation, cuDNN/cuBLAS workspaces, a custom kernel or another library)"
		e.Recommendations = []string{"if it fails at start-up, the GPU is already held by another process: check `nvidia-smi` and CUDA_VISIBLE_DEVICES", "rerun with CUDA_LAUNCH_BLOCKING=1 to find the failing call", adviceBatch}
	}
	if len(ctx.GPUProcesses) > 0 {
		e.Arithmetic = append(e.Arithmetic, "processes on the GPU (NVML): "+processList(ctx.GPUProcesses, nil))
	}
	return e
}
