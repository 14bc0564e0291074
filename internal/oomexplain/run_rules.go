package oomexplain

import (
	"fmt"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// runIncidents turns the run's evidence into incidents: the kernel's
// reports about the job and the incidents in its exception texts (through
// the same parser as `torchmem oom`), plus what only the supervisor saw —
// the hook's OOM observer and the cgroup's oom_kill counter when the
// kernel log could not be read.
func runIncidents(ev RunEvidence) []Incident {
	p := NewParser(Options{Source: "run"})
	for _, l := range ev.KernelLines {
		p.FeedBytes([]byte(l))
	}
	for _, x := range ev.Exceptions {
		for _, l := range strings.Split(x.Text, "\n") {
			p.FeedBytes([]byte(l))
		}
	}
	var incs []Incident
	for _, inc := range p.Close() {
		if aboutJob(ev, inc) {
			incs = append(incs, inc)
		}
	}
	incs = withHookOOM(ev, incs)
	return withCgroupKill(ev, incs)
}

// aboutJob: a kernel incident must name one of the job's PIDs or its
// cgroup; incidents from the job's own exception text are its own.
func aboutJob(ev RunEvidence, inc Incident) bool {
	if inc.Kind != KindKernelOOM {
		return true
	}
	for _, p := range inc.PIDs {
		if slices.Contains(ev.JobPIDs, p) {
			return true
		}
	}
	for _, r := range inc.Raw {
		if ev.CgroupPath != "" && strings.Contains(r, ev.CgroupPath) {
			return true
		}
	}
	return false
}

// withHookOOM merges the OOM observer's numbers into the CUDA incident of
// the exception text, or makes one from them when the text had none.
func withHookOOM(ev RunEvidence, incs []Incident) []Incident {
	if len(ev.CUDAOOMs) == 0 {
		return incs
	}
	o := ev.CUDAOOMs[len(ev.CUDAOOMs)-1]
	c := &CUDAOOM{Format: "hook", Device: &o.Device, Message: "torchmem hook: OOM observer"}
	for _, f := range []struct {
		dst **int64
		v   int64
	}{{&c.RequestedBytes, o.Requested}, {&c.FreeBytes, o.DeviceFree}, {&c.AllocatedBytes, o.Allocated}, {&c.ReservedBytes, o.Reserved}} {
		if f.v >= 0 {
			*f.dst = i64Ptr(f.v)
		}
	}
	if o.Allocated >= 0 && o.Reserved >= 0 {
		c.ReservedUnallocatedBytes = i64Ptr(max(0, o.Reserved-o.Allocated))
	}
	for i := range incs {
		if incs[i].Kind == KindCUDAOOM && incs[i].CUDA != nil {
			fillMissing(incs[i].CUDA, c)
			return incs
		}
	}
	return append(incs, Incident{Kind: KindCUDAOOM, Source: "hook", PIDs: []int{o.PID}, Count: 1, CUDA: c})
}

// withCgroupKill: the cgroup counted an OOM kill but no kernel report
// about the job was read (not root, or the log rotated): the counter is
// the evidence, and the cgroup's limit and peak are the numbers.
func withCgroupKill(ev RunEvidence, incs []Incident) []Incident {
	if ev.CgroupOOMKills == nil || *ev.CgroupOOMKills == 0 {
		return incs
	}
	for _, inc := range incs {
		if inc.Kind == KindKernelOOM {
			return incs
		}
	}
	ko := &KernelOOM{Constraint: "CONSTRAINT_MEMCG", OOMMemcg: ev.CgroupPath,
		ConstraintInferred: fmt.Sprintf("memory.events oom_kill %d", *ev.CgroupOOMKills)}
	if ev.CgroupLimitBytes != nil {
		ko.Memcg = &MemcgCounters{LimitBytes: *ev.CgroupLimitBytes, UsageBytes: valOr(ev.CgroupPeakBytes, *ev.CgroupLimitBytes)}
	}
	return append(incs, Incident{Kind: KindKernelOOM, Source: "cgroup", Count: 1, Kernel: ko})
}

// runVictims: the job's processes the kernel killed, and the kill lines.
func runVictims(ev RunEvidence, incs []Incident) (out []RunVictim, lines []string) {
	for _, inc := range incs {
		if inc.Kind != KindKernelOOM {
			continue
		}
		for _, r := range inc.Raw {
			if strings.Contains(r, "Killed process") || strings.Contains(r, "oom-kill:") {
				lines = append(lines, r)
			}
		}
		k := inc.Kernel
		if k == nil || k.Victim == nil || !victimIsJobs(ev, inc) {
			continue
		}
		v := RunVictim{PID: k.Victim.PID, Comm: k.Victim.Comm, Main: k.Victim.PID == ev.MainPID,
			Worker: slices.Contains(ev.Workers, k.Victim.PID), AnonRSS: valOr(k.Victim.AnonRSSBytes, 0)}
		out = append(out, v)
	}
	if len(out) == 0 && killedByCgroup(ev) {
		out = []RunVictim{{PID: ev.MainPID, Main: true, Comm: "(main process; kernel log not available)"}}
	}
	return out, lines
}

// killedByCgroup: the cgroup counted an OOM kill and the main process
// died of SIGKILL.
func killedByCgroup(ev RunEvidence) bool {
	return ev.CgroupOOMKills != nil && *ev.CgroupOOMKills > 0 && ev.Signal != nil && *ev.Signal == int(syscall.SIGKILL)
}

// victimIsJobs: the killed process is one of the job's, or sat in the
// job's cgroup. An incident the job only triggered, whose victim was
// someone else's, does not count.
func victimIsJobs(ev RunEvidence, inc Incident) bool {
	k := inc.Kernel
	if slices.Contains(ev.JobPIDs, k.Victim.PID) {
		return true
	}
	if ev.CgroupPath == "" {
		return false
	}
	if k.TaskMemcg != "" {
		return strings.Contains(k.TaskMemcg, ev.CgroupPath)
	}
	for _, r := range inc.Raw {
		if strings.Contains(r, ev.CgroupPath) {
			return true
		}
	}
	return false
}

// runCause decides the cause from the evidence, measured first: a job's
// claim of a CUDA OOM counts only when its own torch could have one.
func runCause(ev RunEvidence, rv RunVerdict, incs []Incident) string {
	oomKills := ev.CgroupOOMKills != nil && *ev.CgroupOOMKills > 0
	mainKilled, workerKilled := false, false
	for _, v := range rv.Victims {
		mainKilled = mainKilled || v.Main
		workerKilled = workerKilled || !v.Main
	}
	workerDied := strings.Contains(rv.Exception, "DataLoader worker") &&
		(strings.Contains(rv.Exception, "killed") || strings.Contains(rv.Exception, "exited unexpectedly"))
	switch {
	case ev.PolicyStop != nil && len(rv.Victims) == 0 && !oomKills && !cudaClaimed(ev, incs):
		// Checked before a clean exit: a job that catches the rule's
		// SIGTERM and exits 0 was still ended by torchmem.
		return CausePolicyStop
	case ev.ExitCode == 0 && len(rv.Victims) == 0:
		return CauseOK
	case cudaClaimed(ev, incs) && !cudaImpossible(ev):
		return CauseCUDAOOM
	case workerKilled && !mainKilled || workerDied:
		return CauseWorkerKilled
	case len(rv.Victims) > 0 || oomKills:
		if oomKills || anyMemcg(incs) {
			return CauseCgroupOOMKill
		}
		return CauseHostOOMKill
	case ev.Signal != nil:
		return CauseSignal
	}
	return CauseExitCode
}

func anyMemcg(incs []Incident) bool {
	for _, inc := range incs {
		if inc.Kind == KindKernelOOM && inc.Kernel != nil && inc.Kernel.Constraint == "CONSTRAINT_MEMCG" {
			return true
		}
	}
	return false
}

// cudaClaimed: the hook reported a CUDA OOM, or an OOM exception names CUDA.
func cudaClaimed(ev RunEvidence, incs []Incident) bool {
	if len(ev.CUDAOOMs) > 0 {
		return true
	}
	for _, x := range ev.Exceptions {
		if x.OOM && strings.Contains(x.Text, "CUDA") {
			return true
		}
	}
	for _, inc := range incs {
		if inc.Kind == KindCUDAOOM || inc.Kind == KindCUDAMallocAsync {
			return true
		}
	}
	return false
}

// cudaImpossible: every process that claimed a CUDA OOM is hooked and
// said it had no CUDA device in use — a CPU-only job cannot run out of GPU
// memory, so its claim is not the verdict.
func cudaImpossible(ev RunEvidence) bool {
	claimers := claimingPIDs(ev)
	if len(claimers) == 0 {
		return false
	}
	for _, p := range claimers {
		if !slices.Contains(ev.HookedPIDs, p) || slices.Contains(ev.CUDAPIDs, p) {
			return false
		}
	}
	return true
}

func claimingPIDs(ev RunEvidence) []int {
	var out []int
	add := func(pid int) {
		if !slices.Contains(out, pid) {
			out = append(out, pid)
		}
	}
	for _, o := range ev.CUDAOOMs {
		add(o.PID)
	}
	for _, x := range ev.Exceptions {
		if x.OOM && strings.Contains(x.Text, "CUDA") {
			add(x.PID)
		}
	}
	return out
}

// claimNotes label the job's claims and measurements and say where they
// disagree.
func claimNotes(ev RunEvidence, incs []Incident) []Msg {
	var out []Msg
	if cudaClaimed(ev, incs) {
		if cudaImpossible(ev) {
			out = append(out, msg("run.note.cuda_claim_impossible", joinInts(claimingPIDs(ev))))
		} else {
			out = append(out, msg("run.note.cuda_claim", joinInts(claimingPIDs(ev))))
		}
	}
	if len(out) == 0 && ev.ExitCode == 0 && ev.Signal == nil {
		// A clean end: nothing claimed, nothing to set against it.
		return nil
	}
	var measured []Msg
	if ev.Signal != nil {
		measured = append(measured, msg("run.measured.signal", sigName(*ev.Signal)))
	} else {
		measured = append(measured, msg("run.measured.exit", itoa(ev.ExitCode)))
	}
	if ev.CgroupOOMKills != nil {
		measured = append(measured, msg("run.measured.oom_kill", fmt.Sprint(*ev.CgroupOOMKills)))
	}
	if ev.KernelLines != nil {
		measured = append(measured, msg("run.measured.kernel_lines", itoa(len(ev.KernelLines))))
	}
	return append(out, msgOf("run.note.measured", listArg(measured, ", ")))
}

func sigName(n int) string {
	if s := unix.SignalName(syscall.Signal(n)); s != "" {
		return s
	}
	return fmt.Sprintf("signal %d", n)
}
