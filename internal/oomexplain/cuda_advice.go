package oomexplain

import "github.com/torchmem/torchmem/internal/allocconf"

// adviceMsg names a recommendation of messages_en.go ("advice.<name>").
func adviceMsg(name string, args ...string) Msg { return msg("advice."+name, args...) }

// cudaAdvice adds what to do about verdict v, each recommendation with
// the evidence that calls for it.
func cudaAdvice(fd *finding, v Verdict, f cudaFacts, c *CUDAOOM, ctx Context) {
	fd.advice = append(fd.advice, cudaAdviceFor(v, f, c, ctx)...)
}

// cudaAltAdvice adds the first recommendation of an alternative verdict,
// saying that the evidence cannot rule it out.
func cudaAltAdvice(fd *finding, v Verdict, f cudaFacts, c *CUDAOOM, ctx Context) {
	if as := cudaAdviceFor(v, f, c, ctx); len(as) > 0 {
		fd.do(as[0].what, msg("because.alternative", string(v)))
	}
}

func cudaAdviceFor(v Verdict, f cudaFacts, c *CUDAOOM, ctx Context) []advice {
	switch v {
	case VerdictGPUOOM:
		if f.roomy() {
			why := msg("because.roomy", b(f.free), b(f.req))
			return []advice{{adviceMsg("private_pools"), why}, {adviceMsg("concurrent_start"), why}}
		}
		why := msg("because.no_numbers")
		return []advice{{adviceMsg("batch"), why}, {adviceMsg("amp"), why}, {adviceMsg("checkpointing"), why}}
	case VerdictRequestTooLarge:
		why := msg("because.too_large", b(f.req), b(f.total))
		return []advice{{adviceMsg("check_shapes"), why}, {adviceMsg("chunks"), why}}
	case VerdictMemoryFraction:
		why := msg("because.over_cap", b(max(f.alloc, 0)), b(f.req), b(f.allowed))
		if c, ok := inferredCap(f); ok && f.allowed < 0 {
			why = msg("because.inferred_cap", b(f.free), b(c))
		}
		return []advice{{adviceMsg("raise_fraction"), why}, {adviceMsg("batch"), why}}
	case VerdictOtherProcesses:
		return othersAdvice(f, c, ctx)
	case VerdictOutsidePyTorch:
		why := msg("because.self_outside", b(max(f.selfExtra(), f.outside())))
		return []advice{{adviceMsg("non_pytorch_memory"), why}, {adviceMsg("nvidia_smi"), why}}
	case VerdictFragmentation:
		return fragmentationAdvice(f, ctx.AllocConf)
	}
	return doesNotFitAdvice(f)
}

// othersAdvice: name who held the memory; when several processes share
// GPU 0, the usual bug is ranks that never selected their own device.
func othersAdvice(f cudaFacts, c *CUDAOOM, ctx Context) []advice {
	why := msg("because.held_elsewhere", b(f.elsewhere()))
	who := processList(f.others, ctx.GPUProcesses)
	if who == "" {
		who = processList(ctx.GPUProcesses, nil)
	}
	var out []advice
	if len(f.others) >= 2 && c.Device != nil && *c.Device == 0 {
		out = append(out, advice{adviceMsg("ranks_share_gpu0", itoa(len(f.others)+1)), msg("because.many_on_gpu0", itoa(len(f.others)))})
	}
	if who != "" {
		out = append(out, advice{adviceMsg("free_gpu_from", who), why})
	} else {
		out = append(out, advice{adviceMsg("find_gpu_holders"), why})
	}
	return append(out, advice{adviceMsg("nvidia_smi"), why})
}

// fragmentationAdvice gives the allocator setting the proven PyTorch
// version has: expandable_segments from 2.1, max_split_size_mb from 1.10;
// with the job's settings known (conf), not one it has already: with
// expandable_segments and max_split_size_mb both set, the fragmentation
// is theirs (pytorch/pytorch#123548), and the advice is to drop the
// latter.
func fragmentationAdvice(f cudaFacts, conf *allocconf.Conf) []advice {
	why := msg("because.slack", b(f.unalloc), b(f.req), pctF(f.fill()))
	if f.async {
		why = msg("because.async_gap", b(max(0, f.total-f.free-f.alloc)))
		return []advice{{adviceMsg("async_empty_cache"), why}, {adviceMsg("async_native"), why}}
	}
	var out []advice
	switch {
	case conf != nil && conf.Expandable && conf.MaxSplit > 0:
		out = append(out, advice{adviceMsg("drop_max_split"), msg("because.split_expandable", b(f.unalloc))})
	case conf != nil && conf.Expandable:
		// set already: what is left is the phases' sizes
	default:
		out = append(out, advice{allocConfAdvice(f.version), why})
	}
	return append(out, advice{adviceMsg("empty_cache_phases"), why})
}

// allocConfAdvice picks the PYTORCH_CUDA_ALLOC_CONF setting for v.
func allocConfAdvice(v torchVersion) Msg {
	if yes, sure := v.atLeast("2.1"); sure && yes {
		return adviceMsg("expandable_segments")
	} else if !sure {
		return adviceMsg("expandable_or_split", v.String())
	}
	if yes, sure := v.atLeast("1.10"); sure && yes {
		return adviceMsg("max_split_size", v.String())
	}
	return adviceMsg("upgrade_for_allocator", v.String())
}

// doesNotFitAdvice: the job must need less; a single request that is a
// large share of the GPU points at a shape first.
func doesNotFitAdvice(f cudaFacts) []advice {
	why := msg("because.fill", pctF(f.fill()), b(f.reachable()))
	if f.fill() < 0 {
		why = msg("because.no_slack")
	}
	var out []advice
	if r := f.reachable(); r > 0 && f.req > 0 && float64(f.req) > largeRequestShare*float64(r) {
		out = append(out, advice{adviceMsg("check_shapes"), msg("because.large_request", b(f.req), b(r))})
	}
	for _, m := range []Msg{adviceMsg("batch"), adviceMsg("amp"), adviceMsg("checkpointing"), adviceMsg("shard"), adviceMsg("estimate")} {
		out = append(out, advice{m, why})
	}
	return out
}
