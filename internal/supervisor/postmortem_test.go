package supervisor

import (
	"os"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/hook"
	"github.com/torchmem/torchmem/internal/jobcgroup"
)

func TestClassify(t *testing.T) {
	b, err := os.ReadFile("testdata/kernel-memcg-oom.txt")
	if err != nil {
		t.Fatal(err)
	}
	kernel := strings.Split(strings.TrimSpace(string(b)), "\n")
	one, nine := int64(1), 9
	limit := int64(200 << 20)
	worker := &hook.Hello{Worker: true}
	cases := []struct {
		name  string
		e     evidence
		cause string
		want  []string // in the verdict
	}{
		{"clean exit", evidence{code: 0}, CauseOK, []string{"exited normally"}},
		{"exit code", evidence{code: 3}, CauseExitCode, []string{"status 3"}},
		{"signal", evidence{code: 139, sig: intp(11)}, CauseSignal, []string{"not by the OOM killer"}},
		{"main killed in cgroup", evidence{code: 137, sig: &nine, mainPID: 30640, kernel: kernel, limit: &limit,
			events: &jobcgroup.Events{OOMKill: &one}, jobPIDs: map[int]bool{30640: true}},
			CauseCgroupOOMKill, []string{"200.00 MiB", "victim main process 30640 (python3)"}},
		{"worker killed", evidence{code: 1, mainPID: 1, kernel: kernel, events: &jobcgroup.Events{OOMKill: &one},
			jobPIDs: map[int]bool{1: true, 30640: true}, hello: map[int]*hook.Hello{30640: worker}},
			CauseWorkerKilled, []string{"DataLoader worker was killed", "victim DataLoader worker 30640"}},
		{"no kernel log", evidence{code: 137, sig: &nine, mainPID: 5, events: &jobcgroup.Events{OOMKill: &one}},
			CauseCgroupOOMKill, []string{"victim main process 5"}},
		{"cuda oom fragmented", evidence{code: 1, ooms: []hook.OOM{{Device: 0, Alloc: 2 << 30, DeviceFree: 1 << 20,
			Stats: &hook.DeviceStats{Allocated: 70 << 30, Reserved: 74 << 30}}}},
			CauseCUDAOOM, []string{"tried to allocate 2.00 GiB", "(fragmentation"}},
		{"worker exception", evidence{code: 1, excs: []hook.Exception{{ExcType: "RuntimeError",
			Text: "Traceback ...\nRuntimeError: DataLoader worker (pid 77) is killed by signal: Killed."}}},
			CauseWorkerKilled, []string{"DataLoader worker was killed"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := classify(c.e)
			explain(&s)
			if s.Cause != c.cause {
				t.Fatalf("cause %s, want %s (%s)", s.Cause, c.cause, s.Verdict)
			}
			for _, w := range c.want {
				if !strings.Contains(s.Verdict, w) {
					t.Errorf("verdict %q lacks %q", s.Verdict, w)
				}
			}
		})
	}
}

func intp(n int) *int { return &n }

// TestVictimsAreTheJobs: a kill counts when the victim is one of the job's
// processes or sat in its cgroup, not when the job only triggered a host
// OOM whose victim was someone else's.
func TestVictimsAreTheJobs(t *testing.T) {
	hostOOM := []string{
		"python3 invoked oom-killer: gfp_mask=0x140dca(GFP_HIGHUSER_MOVABLE|__GFP_COMP|__GFP_ZERO), order=0, oom_score_adj=0",
		"CPU: 1 PID: 500 Comm: python3 Not tainted 6.1.0 #1",
		"oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/system.slice/db.service,task=postgres,pid=777,uid=0",
		"Out of memory: Killed process 777 (postgres) total-vm:9000000kB, anon-rss:8000000kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:9000kB oom_score_adj:0",
	}
	e := evidence{mainPID: 500, kernel: hostOOM, jobPIDs: map[int]bool{500: true}, cgroupRel: "/torchmem/run-abc"}
	if v, _, _ := e.victims(e.jobIncidents()); len(v) != 0 {
		t.Errorf("someone else's process counted as the job's victim: %+v", v)
	}
	unseen := []string{
		"python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0",
		"oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/torchmem/run-abc,task_memcg=/torchmem/run-abc,task=python3,pid=612,uid=0",
		"Memory cgroup out of memory: Killed process 612 (python3) total-vm:229608kB, anon-rss:204160kB, file-rss:6516kB, shmem-rss:0kB, UID:0 pgtables:456kB oom_score_adj:0",
	}
	e = evidence{mainPID: 500, kernel: unseen, jobPIDs: map[int]bool{500: true}, cgroupRel: "/torchmem/run-abc"}
	v, memcg, lines := e.victims(e.jobIncidents())
	if len(v) != 1 || v[0].PID != 612 || v[0].Main || !memcg || v[0].AnonRSS != 204160<<10 || len(lines) != 2 {
		t.Errorf("a process of the job's cgroup: victims %+v memcg %v lines %q", v, memcg, lines)
	}
}
