package oomexplain

import (
	"fmt"
	"strings"
)

// explainHost explains the training-side failures: shared memory, the fd
// limit, Slurm and systemd-oomd kills, and processes killed by someone
// (kernelWhy says who when the kernel's report is in the logs given).
func explainHost(incs []Incident, i int, ctx Context) finding {
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
	case KindContainerKilled:
		return explainContainer(f, ctx)
	case KindSystemdOOMD:
		fd := finding{verdict: VerdictSystemdOOMD, summary: msg("host.summary.oomd", orUnknown(f.Cgroup), orUnknown(f.Reason))}
		fd.do(adviceMsg("oomd_avoid"), msg("because.oomd", orUnknown(f.Reason)))
		return fd
	}
	return explainKilled(incs, i, ctx)
}

// who names the process a host-side incident is about.
func who(inc *Incident) Msg {
	switch {
	case inc.Kind == KindTorchrunSIGKILL && inc.Rank != nil:
		return msg("who.rank", itoa(*inc.Rank))
	case inc.Kind == KindTorchrunSIGKILL:
		return msg("who.training_process")
	case inc.Kind == KindShellKilled && inc.Failure != nil && inc.Failure.Program != "":
		return msg("who.program", inc.Failure.Program)
	case inc.Kind == KindShellKilled:
		return msg("who.command")
	case len(inc.PIDs) > 0:
		return msg("who.dataloader", joinInts(inc.PIDs))
	}
	return msg("who.process")
}

// explainKilled: a worker, a torchrun child or a shell's command died of
// SIGKILL (or exited). DataLoader advice is given only when a DataLoader
// is in the evidence.
func explainKilled(incs []Incident, i int, ctx Context) finding {
	inc := &incs[i]
	w := who(inc)
	if f := inc.Failure; inc.Kind == KindDataLoaderExited && f != nil && f.ExitCode != nil && *f.ExitCode > 0 {
		fd := finding{verdict: VerdictWorkerExited, summary: msgOf("host.summary.worker_exited", w, itoa(*f.ExitCode))}
		fd.do(adviceMsg("workers_zero"), msg("because.exit_code", itoa(*f.ExitCode)))
		return fd
	}
	for _, j := range inc.Related {
		if k := &incs[j]; k.Kind == KindSlurmOOM {
			fd := explainSlurm(k.Failure)
			fd.summary = msgOf("host.summary.killed_slurm", w)
			// Slurm's cgroup limit is enforced by the kernel's OOM killer.
			fd.alts = []Verdict{VerdictKilledByKernel}
			return fd
		}
	}
	for _, j := range inc.Related {
		if k := &incs[j]; k.Kind == KindKernelOOM {
			return killedByKernel(inc, k, w, ctx)
		}
	}
	if f := inc.Failure; inc.Kind == KindDataLoaderExited && f != nil && f.Platform == PlatformWindows {
		// No OOM killer and no SIGKILL on Windows: the workers most
		// likely failed on their own; a forced termination stays possible.
		fd := finding{verdict: VerdictWorkerExited, alts: []Verdict{VerdictKilledSIGKILL}, summary: msgOf("host.summary.windows_exit", w)}
		fd.do(adviceMsg("workers_zero"), msg("because.windows_paths"))
		return fd
	}
	return killedUnknown(inc, w, ctx)
}

func killedByKernel(inc, k *Incident, w Msg, ctx Context) finding {
	kf := explainKernel(k, ctx)
	fd := finding{verdict: VerdictKilledByKernel, summary: msgOf("host.summary.killed_kernel", w, kernelWhy(k, kf.verdict))}
	if dataLoaderEvidence(inc) {
		fd.do(adviceMsg("workers"), msg("because.dataloader_killed"))
	}
	fd.advice = append(fd.advice, kf.advice...)
	return fd
}

// hostMemoryAdvice: where to see what grew.
func hostMemoryAdvice(ctx Context) Msg {
	if ctx.Supervised {
		return adviceMsg("host_memory_run")
	}
	return adviceMsg("host_memory")
}

func killedUnknown(inc *Incident, w Msg, ctx Context) finding {
	fd := finding{verdict: VerdictKilledSIGKILL, summary: msgOf("host.summary.sigkill", w)}
	if inc.Kind == KindDataLoaderExited {
		// No signal reported: a bus error on shared memory or a crash of
		// the worker leave the same message.
		fd.summary = msgOf("host.summary.worker_gone", w)
		fd.alts = []Verdict{VerdictSharedMemory, VerdictWorkerExited}
	}
	why := msg("because.no_kernel_report")
	fd.do(adviceMsg("find_kill"), why)
	if dataLoaderEvidence(inc) {
		fd.do(adviceMsg("workers"), msg("because.dataloader_killed"))
	} else {
		fd.do(hostMemoryAdvice(ctx), why)
	}
	if !ctx.Supervised {
		fd.do(adviceMsg("run_under_torchmem"), why)
	}
	return fd
}

// dataLoaderEvidence: the incident itself is a DataLoader's.
func dataLoaderEvidence(inc *Incident) bool {
	return inc.Kind == KindDataLoaderKilled || inc.Kind == KindDataLoaderExited
}

// kernelWhy words the kernel report's verdict v for the killed process.
func kernelWhy(k *Incident, v Verdict) Msg {
	switch v {
	case VerdictCgroupLimit:
		return msg("host.why.memcg", orUnknown(k.Kernel.OOMMemcg))
	case VerdictCpusetExhausted:
		return msg("host.why.cpuset")
	case VerdictIncomplete:
		return msg("host.why.unknown")
	}
	return msg("host.why.host")
}

// explainShm: /dev/shm is shown only when the log is this host's: the
// size here says nothing about the machine that wrote a pasted log.
func explainShm(f *HostFailure, ctx Context) finding {
	if shmOpenFailed(f) {
		fd := explainNoFile(ctx)
		fd.alts = []Verdict{VerdictSharedMemory}
		fd.note(msg("host.arith.shm_open"))
		return fd
	}
	fd := finding{verdict: VerdictSharedMemory, summary: msg("host.summary.shm")}
	if ctx.ShmSizeBytes > 0 && ctx.SameHost {
		fd.note(msg("host.arith.shm_here", b(ctx.ShmSizeBytes)))
	} else {
		fd.note(msg("host.arith.shm_there"))
	}
	fd.note(msg("host.arith.shm_need"))
	if f.Errno != "" {
		fd.note(msg("host.arith.errno", f.Errno))
	}
	why := msg("evidence.text", firstNonEmpty(f.Errno, f.Signal, f.ShmObject, "shared memory"))
	fd.do(adviceMsg("shm_size"), why)
	fd.do(adviceMsg("shm_lower"), why)
	return fd
}

func explainNoFile(ctx Context) finding {
	fd := finding{verdict: VerdictFDLimit, summary: msg("host.summary.nofile")}
	if ctx.NoFileLimit > 0 && ctx.SameHost {
		fd.note(msg("host.arith.nofile_here", fmt.Sprint(ctx.NoFileLimit)))
	} else {
		fd.note(msg("host.arith.nofile_there"))
	}
	fd.do(adviceMsg("nofile"), msg("evidence.text", "Too many open files"))
	return fd
}

func explainSlurm(f *HostFailure) finding {
	fd := finding{verdict: VerdictSlurmLimit, summary: msg("host.summary.slurm")}
	if f == nil {
		f = &HostFailure{}
	}
	if f.OOMEvents != nil {
		fd.note(msg("host.arith.slurm_events", itoa(*f.OOMEvents), orUnknown(f.StepID)))
	}
	job := f.JobID
	if job == "" {
		job = "JOBID"
	}
	why := msg("evidence.text", firstNonEmpty(f.Message, "slurmstepd oom-kill"))
	fd.do(adviceMsg("slurm_mem"), why)
	fd.do(adviceMsg("slurm_sacct", job), why)
	return fd
}

// explainContainer: the runtime's OOMKilled is its own cgroup's OOM
// event (the kernel killed inside the container's limit); exit code 137
// without it is a SIGKILL from elsewhere (a host OOM, a kill by hand).
func explainContainer(f *HostFailure, ctx Context) finding {
	code := "unknown"
	if f.ExitCode != nil {
		code = itoa(*f.ExitCode)
	}
	why := msg("because.exit_code", code)
	if f.OOMKilled != nil && *f.OOMKilled {
		why = msg("evidence.text", "OOMKilled")
		fd := finding{verdict: VerdictCgroupLimit, summary: msg("host.summary.container_oom", code)}
		fd.do(adviceMsg("container_limit"), why)
		fd.do(hostMemoryAdvice(ctx), why)
		return fd
	}
	fd := finding{verdict: VerdictKilledSIGKILL, summary: msg("host.summary.container_sigkill", code)}
	fd.do(adviceMsg("find_kill"), why)
	fd.do(hostMemoryAdvice(ctx), why)
	return fd
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// shmOpenFailed: "unable to open shared memory object" without "No space
// left on device": opening (shm_open) cannot fail for lack of room, but
// it needs a file descriptor, so the open-file limit is the suspect.
func shmOpenFailed(f *HostFailure) bool {
	if !strings.Contains(f.Message, "unable to open shared memory object") && !strings.Contains(f.Message, "unable to open share memory object") {
		return false
	}
	return !strings.Contains(f.Errno, "No space left")
}
