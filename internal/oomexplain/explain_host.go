package oomexplain

import "fmt"

const (
	adviceWorkers = "reduce DataLoader memory: fewer num_workers, a smaller prefetch_factor, and datasets as numpy arrays or memory-mapped files instead of Python lists/dicts (workers copy Python objects they touch)"
	adviceShmSize = "enlarge /dev/shm: `mount -o remount,size=32G /dev/shm`; in Docker `--shm-size=16g` (or `--ipc=host`); in Kubernetes an emptyDir with medium: Memory mounted at /dev/shm"
	adviceNoFile  = "raise the open-file limit: `ulimit -n 65536` before starting (LimitNOFILE= in a systemd unit, `torchmem run --nofile 65536`), or call torch.multiprocessing.set_sharing_strategy('file_system')"
)

func explainHost(incs []Incident, i int, ctx Context) Explanation {
	inc := &incs[i]
	f := inc.Failure
	if f == nil {
		f = &HostFailure{}
	}
	switch inc.Kind {
	case KindSharedMemory:
		return explainShm(f, ctx)
	case KindTooManyOpenFiles:
		return explainNoFile(ctx)
	case KindSlurmOOM:
		return explainSlurm(f)
	case KindSystemdOOMD:
		return Explanation{Verdict: VerdictSystemdOOMD,
			Summary:         fmt.Sprintf("systemd-oomd (the userspace OOM killer) killed cgroup %s: %s", orUnknown(f.Cgroup), orUnknown(f.Reason)),
			Recommendations: []string{"run the job in its own slice or scope with ManagedOOMPreference=avoid, or relax ManagedOOMMemoryPressureLimit= / ManagedOOMSwap= (see `oomctl`)", adviceWorkers}}
	}
	return explainKilled(incs, i, ctx)
}

// explainKilled: a DataLoader worker or torchrun child died of SIGKILL.
func explainKilled(incs []Incident, i int, ctx Context) Explanation {
	inc := &incs[i]
	who := "the process"
	if inc.Kind == KindTorchrunSIGKILL {
		who = "the training process"
		if inc.Rank != nil {
			who = fmt.Sprintf("rank %d", *inc.Rank)
		}
	} else if len(inc.PIDs) > 0 {
		who = "DataLoader worker pid " + joinInts(inc.PIDs)
	}
	if f := inc.Failure; inc.Kind == KindDataLoaderExited && f != nil && f.ExitCode != nil && *f.ExitCode > 0 {
		return Explanation{Verdict: VerdictWorkerExited,
			Summary:         fmt.Sprintf("%s exited with code %d: an error inside the worker, not a kill", who, *f.ExitCode),
			Recommendations: []string{"rerun with num_workers=0 to see the worker's own traceback"}}
	}
	for _, j := range inc.Related {
		if k := &incs[j]; k.Kind == KindSlurmOOM {
			e := explainSlurm(k.Failure)
			e.Summary = who + " was killed when the Slurm job hit its memory limit (the job's cgroup OOM handler)"
			return e
		}
	}
	for _, j := range inc.Related {
		if k := &incs[j]; k.Kind == KindKernelOOM {
			ke := explainKernel(k, ctx)
			e := Explanation{Verdict: VerdictKilledByKernel,
				Summary: fmt.Sprintf("%s was killed by the kernel's OOM killer (%s)", who, kernelWhy(k, ke.Verdict))}
			e.Recommendations = append([]string{adviceWorkers}, ke.Recommendations...)
			return dedupStrings(e)
		}
	}
	e := Explanation{Verdict: VerdictKilledSIGKILL,
		Summary: who + " was killed with SIGKILL; no kernel OOM report for it is in the logs given. The usual sender is the kernel's OOM killer (a cgroup limit or the whole host)"}
	if inc.Kind == KindDataLoaderExited {
		e.Summary = who + " exited unexpectedly; when the kernel log shows an OOM kill of that pid, memory is the cause"
	}
	e.Recommendations = []string{"look for the kill in the kernel log of that host and time: `torchmem oom` (or `dmesg -T | grep -i oom`)", adviceWorkers,
		"run under `torchmem run --memory-max SIZE` to get the kill reported with the job"}
	return e
}

// kernelWhy words the kernel report's verdict v for the killed process.
func kernelWhy(k *Incident, v Verdict) string {
	switch v {
	case VerdictCgroupLimit:
		return "memory cgroup " + orUnknown(k.Kernel.OOMMemcg) + " hit its limit"
	case VerdictCpusetExhausted:
		return "its NUMA nodes ran out"
	}
	return "the host ran out of memory"
}

func explainShm(f *HostFailure, ctx Context) Explanation {
	e := Explanation{Verdict: VerdictSharedMemory,
		Summary: "DataLoader workers pass batches through shared memory (/dev/shm) and it ran out"}
	if ctx.ShmSizeBytes > 0 {
		e.Arithmetic = append(e.Arithmetic, "/dev/shm on this host: "+b(ctx.ShmSizeBytes)+" (Docker's default is 64.00 MiB)")
	}
	e.Arithmetic = append(e.Arithmetic, "needed at once: about batch size × bytes per sample × num_workers × prefetch_factor (default 2)")
	if f.Errno != "" {
		e.Arithmetic = append(e.Arithmetic, "error: "+f.Errno)
	}
	e.Recommendations = []string{adviceShmSize, "or lower num_workers / prefetch_factor / batch size"}
	return e
}

func explainNoFile(ctx Context) Explanation {
	e := Explanation{Verdict: VerdictFDLimit,
		Summary: "with the file_descriptor sharing strategy every tensor sent between processes holds an open file; the open-file limit was reached"}
	if ctx.NoFileLimit > 0 {
		e.Arithmetic = []string{fmt.Sprintf("open-file limit here (ulimit -n): %d", ctx.NoFileLimit)}
	}
	e.Recommendations = []string{adviceNoFile}
	return e
}

func explainSlurm(f *HostFailure) Explanation {
	e := Explanation{Verdict: VerdictSlurmLimit,
		Summary: "the Slurm job hit the memory limit of its cgroup and processes in it were OOM-killed"}
	if f.OOMEvents != nil {
		e.Arithmetic = []string{fmt.Sprintf("%d oom-kill event(s) in step %s", *f.OOMEvents, orUnknown(f.StepID))}
	}
	job := f.JobID
	if job == "" {
		job = "JOBID"
	}
	e.Recommendations = []string{
		"request more memory: --mem, --mem-per-cpu or --mem-per-gpu",
		fmt.Sprintf("compare the peak with the request: `sacct -j %s --format=JobID,MaxRSS,ReqMem,State`", job),
		adviceWorkers,
	}
	return e
}

func dedupStrings(e Explanation) Explanation {
	seen := map[string]bool{}
	out := e.Recommendations[:0]
	for _, r := range e.Recommendations {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	e.Recommendations = out
	return e
}
