package oomexplain

import (
	"strings"
	"testing"
)

// TestRunVictimsAreTheJobs: a kill counts when the victim is one of the
// job's processes or sat in its cgroup, not when the job only triggered a
// host OOM whose victim was someone else's.
func TestRunVictimsAreTheJobs(t *testing.T) {
	hostOOM := []string{
		"python3 invoked oom-killer: gfp_mask=0x140dca(GFP_HIGHUSER_MOVABLE|__GFP_COMP|__GFP_ZERO), order=0, oom_score_adj=0",
		"CPU: 1 PID: 500 Comm: python3 Not tainted 6.1.0 #1",
		"oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/system.slice/db.service,task=postgres,pid=777,uid=0",
		"Out of memory: Killed process 777 (postgres) total-vm:9000000kB, anon-rss:8000000kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:9000kB oom_score_adj:0",
	}
	ev := RunEvidence{MainPID: 500, ExitCode: 1, KernelLines: hostOOM, JobPIDs: []int{500}, CgroupPath: "/torchmem/run-abc"}
	if rv := ExplainRun(ev); len(rv.Victims) != 0 {
		t.Errorf("someone else's process counted as the job's victim: %+v", rv.Victims)
	}
	unseen := []string{
		"python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0",
		"oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/torchmem/run-abc,task_memcg=/torchmem/run-abc,task=python3,pid=612,uid=0",
		"Memory cgroup out of memory: Killed process 612 (python3) total-vm:229608kB, anon-rss:204160kB, file-rss:6516kB, shmem-rss:0kB, UID:0 pgtables:456kB oom_score_adj:0",
	}
	ev = RunEvidence{MainPID: 500, ExitCode: 1, KernelLines: unseen, JobPIDs: []int{500}, CgroupPath: "/torchmem/run-abc"}
	rv := ExplainRun(ev)
	if len(rv.Victims) != 1 || rv.Victims[0].PID != 612 || rv.Victims[0].Main || rv.Victims[0].AnonRSS != 204160<<10 || len(rv.KernelLines) != 2 {
		t.Errorf("a process of the job's cgroup: victims %+v lines %q", rv.Victims, rv.KernelLines)
	}
	if rv.Cause != CauseWorkerKilled && rv.Cause != CauseCgroupOOMKill {
		t.Errorf("cause %s", rv.Cause)
	}
}

// TestRunCgroupCounterOnly: without the kernel log, the cgroup's oom_kill
// counter is the evidence; the explanation is the same engine's memcg one.
func TestRunCgroupCounterOnly(t *testing.T) {
	one, nine, limit, peak := int64(1), 9, int64(100<<20), int64(100<<20)
	rv := ExplainRun(RunEvidence{ExitCode: 137, Signal: &nine, MainPID: 5, CgroupPath: "/torchmem/run-1",
		CgroupOOMKills: &one, CgroupLimitBytes: &limit, CgroupPeakBytes: &peak})
	if rv.Cause != CauseCgroupOOMKill || len(rv.Incidents) != 1 || rv.Incidents[0].Explanation.Verdict != VerdictCgroupLimit {
		t.Fatalf("cause %s incidents %+v", rv.Cause, rv.Incidents)
	}
	if !strings.Contains(rv.Verdict, "100.00 MiB") || !strings.Contains(rv.Verdict, "victim main process 5") {
		t.Errorf("verdict %q", rv.Verdict)
	}
	if len(rv.Recommendations) == 0 || !strings.Contains(rv.Recommendations[0], "--memory-max") {
		t.Errorf("advice %q", rv.Recommendations)
	}
}

// TestRunClaims: what the job's hook says is labelled as its claim; a
// CUDA OOM claimed by a process whose torch has no CUDA is not the verdict.
func TestRunClaims(t *testing.T) {
	claim := RunEvidence{ExitCode: 1, MainPID: 9, HookedPIDs: []int{9},
		CUDAOOMs:   []JobCUDAOOM{{PID: 9, Requested: 931 << 30, DeviceFree: 0, Allocated: -1, Reserved: -1}},
		Exceptions: []JobException{{PID: 9, Type: "torch.OutOfMemoryError", OOM: true, Text: "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 931.00 GiB."}}}
	rv := ExplainRun(claim)
	if rv.Cause == CauseCUDAOOM || !strings.Contains(strings.Join(rv.Notes, "\n"), "no CUDA build") {
		t.Errorf("forged claim: cause %s notes %q", rv.Cause, rv.Notes)
	}
	claim.CUDAPIDs = []int{9}
	rv = ExplainRun(claim)
	if rv.Cause != CauseCUDAOOM || !strings.Contains(strings.Join(rv.Notes, "\n"), "the job's own") {
		t.Errorf("real claim: cause %s notes %q", rv.Cause, rv.Notes)
	}
	if rv.Incidents[0].Explanation.Verdict != VerdictRequestTooLarge && rv.Incidents[0].Explanation.Verdict != VerdictDoesNotFit {
		t.Errorf("verdict %s", rv.Incidents[0].Explanation.Verdict)
	}
}

// TestRunHookFillsTheMessage: the OOM observer's numbers complete the
// exception text's incident rather than making a second one.
func TestRunHookFillsTheMessage(t *testing.T) {
	ev := RunEvidence{ExitCode: 1, MainPID: 3, HookedPIDs: []int{3}, CUDAPIDs: []int{3},
		CUDAOOMs: []JobCUDAOOM{{PID: 3, Device: 0, Requested: 1503238554, DeviceFree: 143312321249, Allocated: 2 << 30, Reserved: 5 << 30}},
		Exceptions: []JobException{{PID: 3, Type: "torch.OutOfMemoryError", OOM: true,
			Text: "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.40 GiB. GPU 0 has a total capacity of 139.80 GiB of which 133.47 GiB is free. Including non-PyTorch memory, this process has 6.32 GiB memory in use. 5.59 GiB allowed; Of the allocated memory 2.44 GiB is allocated by PyTorch, and 3.14 GiB is reserved by PyTorch but unallocated."}}}
	rv := ExplainRun(ev)
	if len(rv.Incidents) != 1 || rv.Incidents[0].Explanation.Verdict != VerdictFragmentation {
		t.Fatalf("%d incidents: %+v", len(rv.Incidents), rv.Incidents)
	}
	if !strings.Contains(rv.Verdict, "fragmentation") || !strings.Contains(rv.Verdict, "tried to allocate 1.40 GiB") {
		t.Errorf("verdict %q", rv.Verdict)
	}
}

// TestRunPolicyStop: a job that a time-to-OOM rule stopped is reported as
// stopped by torchmem (whether it died of the SIGTERM or caught it and
// exited 0), with the leak's advice first; a kernel kill that came anyway
// still wins.
func TestRunPolicyStop(t *testing.T) {
	term, zero := 15, int64(0)
	stop := &PolicyStop{Rule: "leak-stop", Reason: "cgroup.time_to_oom = 14.4s (threshold 15.0s)", Signal: "SIGTERM"}
	leak := &Growth{BytesPerStep: 8 << 20, FromStep: 3, ToStep: 60, R2: 0.99}
	for _, ev := range []RunEvidence{
		{ExitCode: 143, Signal: &term, MainPID: 5, PolicyStop: stop, Growth: leak, CgroupOOMKills: &zero},
		{ExitCode: 0, MainPID: 5, PolicyStop: stop, Growth: leak},
	} {
		rv := ExplainRun(ev)
		if rv.Cause != CausePolicyStop {
			t.Fatalf("exit %d: cause %s", ev.ExitCode, rv.Cause)
		}
		for _, want := range []string{"stopped by torchmem", "leak-stop", "cgroup.time_to_oom = 14.4s", "sent SIGTERM"} {
			if !strings.Contains(rv.Verdict, want) {
				t.Errorf("verdict %q lacks %q", rv.Verdict, want)
			}
		}
		if len(rv.Recommendations) == 0 || !strings.Contains(rv.Recommendations[0], "8.00 MiB per optimizer step") || !strings.Contains(rv.Recommendations[0], "a leak, not a peak") {
			t.Errorf("advice %q", rv.Recommendations)
		}
	}
	one := int64(1)
	if rv := ExplainRun(RunEvidence{ExitCode: 137, Signal: new(int), MainPID: 5, PolicyStop: stop, CgroupOOMKills: &one}); rv.Cause != CauseCgroupOOMKill {
		t.Errorf("the OOM killer acted before the grace ran out: cause %s", rv.Cause)
	}
	if rv := ExplainRun(RunEvidence{ExitCode: 0, MainPID: 5, Growth: leak}); rv.Cause != CauseOK || len(rv.Recommendations) == 0 || !strings.Contains(rv.Recommendations[0], "a longer run") {
		t.Errorf("a leak that did not end the run: cause %s advice %q", rv.Cause, rv.Recommendations)
	}
}

// TestRunLeakNoRaiseLimit: when the job's memory climbed steadily with its
// steps, the post-mortem does not also tell the user to raise the limit
// (which only delays the kill); without the climb it does.
func TestRunLeakNoRaiseLimit(t *testing.T) {
	one, nine, limit := int64(1), 9, int64(600<<20)
	ev := RunEvidence{ExitCode: 137, Signal: &nine, MainPID: 5, CgroupPath: "/torchmem/run-1", CgroupOOMKills: &one, CgroupLimitBytes: &limit}
	raise := func(rv RunVerdict) bool {
		for _, r := range rv.Recommendations {
			if strings.Contains(r, "raise it above the job's peak") {
				return true
			}
		}
		return false
	}
	if rv := ExplainRun(ev); !raise(rv) {
		t.Fatalf("no leak: the limit's advice is missing: %q", rv.Recommendations)
	}
	ev.Growth = &Growth{BytesPerStep: 8 << 20, FromStep: 3, ToStep: 53, R2: 1}
	if rv := ExplainRun(ev); raise(rv) || !strings.Contains(rv.Recommendations[0], "a leak, not a peak") {
		t.Errorf("leak: %q", rv.Recommendations)
	}
}

// TestRunFragmentationKnowsTheJobsAllocConf: the same fragmentation OOM
// with the job's allocator settings known: without any, the advice is
// expandable_segments; with it set, not again; with it and
// max_split_size_mb (pytorch/pytorch#123548's growth), to drop the latter.
func TestRunFragmentationKnowsTheJobsAllocConf(t *testing.T) {
	ev := RunEvidence{ExitCode: 1, MainPID: 3, HookedPIDs: []int{3}, CUDAPIDs: []int{3},
		Exceptions: []JobException{{PID: 3, Type: "torch.OutOfMemoryError", OOM: true,
			Text: "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.40 GiB. GPU 0 has a total capacity of 139.80 GiB of which 133.47 GiB is free. Including non-PyTorch memory, this process has 6.32 GiB memory in use. 5.59 GiB allowed; Of the allocated memory 2.44 GiB is allocated by PyTorch, and 3.14 GiB is reserved by PyTorch but unallocated."}}}
	for conf, want := range map[string][2]string{
		"":                         {"expandable_segments:True so cached segments", "remove max_split_size_mb"},
		"expandable_segments:True": {"empty_cache()", "so cached segments can grow"},
		"max_split_size_mb:128,expandable_segments:True": {"remove max_split_size_mb from PYTORCH_CUDA_ALLOC_CONF", "so cached segments can grow"},
	} {
		ev.AllocConf = &conf
		advice := strings.Join(ExplainRun(ev).Recommendations, "\n")
		if !strings.Contains(advice, want[0]) || strings.Contains(advice, want[1]) {
			t.Errorf("PYTORCH_CUDA_ALLOC_CONF=%q: advice\n%s\nwant %q, not %q", conf, advice, want[0], want[1])
		}
	}
}
