package supervisor

import (
	"os"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/cgroup"
	"github.com/torchmem/torchmem/internal/hook"
)

// TestClassify: the supervisor's evidence reaches internal/oomexplain's
// post-mortem intact (its rules are tested there, in run_test.go).
func TestClassify(t *testing.T) {
	b, err := os.ReadFile("testdata/kernel-memcg-oom.txt")
	if err != nil {
		t.Fatal(err)
	}
	kernel := strings.Split(strings.TrimSpace(string(b)), "\n")
	one, nine := uint64(1), 9
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
		{"signal", evidence{code: 139, sig: intp(11)}, CauseSignal, []string{"SIGSEGV (not by the OOM killer)"}},
		{"interrupted", evidence{code: 130, sig: intp(2), interrupts: 1}, CauseSignal, []string{"stopped with Ctrl-C (1×)"}},
		{"main killed in cgroup", evidence{code: 137, sig: &nine, mainPID: 30640, kernel: kernel, limit: &limit,
			events: &cgroup.Events{OOMKill: &one}, jobPIDs: map[int]bool{30640: true}},
			CauseCgroupOOMKill, []string{"200.00 MiB", "victim main process 30640 (python3)"}},
		{"worker killed", evidence{code: 1, mainPID: 1, kernel: kernel, events: &cgroup.Events{OOMKill: &one},
			jobPIDs: map[int]bool{1: true, 30640: true}, hello: map[int]*hook.Hello{30640: worker}},
			CauseWorkerKilled, []string{"DataLoader worker was killed", "victim DataLoader worker 30640"}},
		{"no kernel log", evidence{code: 137, sig: &nine, mainPID: 5, events: &cgroup.Events{OOMKill: &one}},
			CauseCgroupOOMKill, []string{"victim main process 5"}},
		{"cuda oom, tensors fill the reach", evidence{code: 1, hello: map[int]*hook.Hello{7: {CUDA: "13.0"}},
			ooms: []pidOOM{{PID: 7, OOM: hook.OOM{Device: 0, Alloc: 2 << 30, DeviceFree: 1 << 20,
				Stats: &hook.DeviceStats{Allocated: 70 << 30, Reserved: 74 << 30}}}}},
			CauseCUDAOOM, []string{"tried to allocate 2.00 GiB", "does_not_fit"}},
		{"cuda oom claimed by a CPU-only process", evidence{code: 1, hello: map[int]*hook.Hello{7: {}},
			ooms: []pidOOM{{PID: 7, OOM: hook.OOM{Device: 0, Alloc: 931 << 30, DeviceFree: 1 << 20}}}},
			CauseExitCode, []string{"status 1"}},
		{"worker exception", evidence{code: 1, excs: []pidException{{PID: 1, Exception: hook.Exception{ExcType: "RuntimeError",
			Text: "Traceback ...\nRuntimeError: DataLoader worker (pid 77) is killed by signal: Killed."}}}},
			CauseWorkerKilled, []string{"DataLoader worker was killed"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := classify(c.e)
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

// TestReliabilityForgedCUDAClaim: a CPU-only job whose hook reports a
// 931 GiB CUDA OOM (a forged or impossible claim) does not get a CUDA
// verdict; the summary labels the claim as the job's and says why it
// was not taken.
func TestReliabilityForgedCUDAClaim(t *testing.T) {
	e := evidence{code: 1, mainPID: 7, hello: map[int]*hook.Hello{7: {Torch: "1.13.1"}},
		ooms: []pidOOM{{PID: 7, OOM: hook.OOM{Device: 0, Alloc: 931 << 30, DeviceFree: 1 << 20}}},
		excs: []pidException{{PID: 7, Exception: hook.Exception{ExcType: "torch.OutOfMemoryError", OOM: true,
			Text: "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 931.00 GiB"}}}}
	s := classify(e)
	notes := strings.Join(s.Notes, " | ")
	t.Logf("RELIABILITY|CUDA OOM claimed by a CPU-only job|not the verdict; the claim labelled as the job's|cause %s, verdict %q; notes: %s", s.Cause, s.Verdict, notes)
	if s.Cause == CauseCUDAOOM || !strings.Contains(s.Verdict, "not taken") || !strings.Contains(notes, "no CUDA build") {
		t.Errorf("cause %s verdict %q notes %q", s.Cause, s.Verdict, notes)
	}
}
