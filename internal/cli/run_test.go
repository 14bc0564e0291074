package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/store"
)

// runBuild builds a real torchmem (CGO_ENABLED=0, like the release) into dir.
func runBuild(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "torchmem")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/torchmem/torchmem/cmd/torchmem")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// runTorchPython finds an interpreter that imports torch, or "":
// $TORCHMEM_TEST_PYTHON, else Debian's /usr/bin/python3 with python3-torch
// (python3 on PATH may be another one). Importing torch takes seconds, so
// the answer is found once for all the tests of the package.
var runTorchPython = sync.OnceValue(func() string {
	for _, py := range []string{os.Getenv("TORCHMEM_TEST_PYTHON"), "/usr/bin/python3", "python3"} {
		if py != "" && exec.Command(py, "-c", "import torch").Run() == nil {
			return py
		}
	}
	return ""
})

func runExec(bin string, args ...string) (stdout, stderr string, code int) {
	cmd := exec.Command(bin, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
		if ws := ee.Sys().(syscall.WaitStatus); ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	} else if err != nil {
		code = -1
	}
	return o.String(), e.String(), code
}

func TestRunBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs real jobs")
	}
	dir := t.TempDir()
	bin := runBuild(t, dir)
	db := filepath.Join(dir, "h.db")
	t.Run("exit statuses", func(t *testing.T) {
		for script, want := range map[string]int{"exit 0": 0, "exit 3": 3, "kill -KILL $$": 137, "kill -SEGV $$": 139} {
			_, bareErr, bare := runExec("/bin/sh", "-c", script)
			_, stderr, code := runExec(bin, "run", "--db", db, "--", "/bin/sh", "-c", script)
			if code != want || bare != want {
				t.Errorf("%q: torchmem %d bare %d want %d\n%s%s", script, code, bare, want, stderr, bareErr)
			}
		}
	})
	t.Run("training loop matches bare run", func(t *testing.T) { runTrainingMatches(t, bin, db) })
	t.Run("orphaned DataLoader workers reaped", func(t *testing.T) { runWorkersReaped(t, bin, db) })
	t.Run("kill -9 of torchmem --keep-job-on-exit leaves the job running", func(t *testing.T) { runSupervisorLost(t, bin, db) })
	t.Run("DataLoader worker OOM-killed", func(t *testing.T) { runWorkerOOM(t, bin, db) })
	t.Run("OOM past --memory-max 200M", func(t *testing.T) { runMemoryMaxOOM(t, bin, db) })
	t.Run("a stop rule's run is stored as stopped", func(t *testing.T) { runPolicyStopped(t, bin, db) })
}

func runTrainingMatches(t *testing.T, bin, db string) {
	py := runTorchPython()
	if py == "" {
		t.Skip("no python3 with torch (Debian: apt install python3-torch)")
	}
	args := []string{"../../examples/train.py", "--epochs", "1", "--samples", "6000", "--workers", "2"}
	bareOut, _, bareCode := runExec(py, args...)
	out, stderr, code := runExec(bin, append([]string{"run", "--db", db, "--memory-max", "3G", "--interval", "100ms", "--", py}, args...)...)
	if out != bareOut || code != bareCode || code != 0 {
		t.Fatalf("torchmem run: code %d stdout %q\nbare: code %d stdout %q\nstderr: %s", code, out, bareCode, bareOut, stderr)
	}
	m := regexp.MustCompile(`done: (\d+) optimizer steps`).FindStringSubmatch(out)
	if m == nil || !strings.Contains(stderr, "optimizer steps: "+m[1]+",") {
		t.Fatalf("step count of the job (%v) not in the summary:\n%s", m, stderr)
	}
	if !strings.Contains(stderr, "exited normally") || !strings.Contains(stderr, "hooked processes: 3") {
		t.Fatalf("summary:\n%s", stderr)
	}
}

func runWorkersReaped(t *testing.T, bin, db string) {
	py := runTorchPython()
	if py == "" {
		t.Skip("no python3 with torch")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs a job cgroup (root) to count what is left behind")
	}
	// The main process dies abruptly while its DataLoader workers run.
	// Each worker is busy in __getitem__ (all but the first item sleep):
	// an idle worker polls for its parent every few seconds and exits by
	// itself once it is gone, which raced with the reaping (CI once saw
	// "killed 1").
	script := `import os, time, torch
from torch.utils.data import DataLoader, Dataset
class Slow(Dataset):
    def __len__(self):
        return 10**6
    def __getitem__(self, i):
        if i:
            time.sleep(60)
        return i
it = iter(DataLoader(Slow(), num_workers=2, batch_size=1))
next(it)
os._exit(3)`
	_, stderr, code := runExec(bin, "run", "--db", db, "--", py, "-c", script)
	if code != 3 || !strings.Contains(stderr, "killed 2 process(es) left behind") {
		t.Fatalf("code %d\n%s", code, stderr)
	}
}

func runSupervisorLost(t *testing.T, bin, db string) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	cmd := exec.Command(bin, "run", "--db", db, "--interval", "100ms", "--keep-job-on-exit", "--", "/bin/sh", "-c",
		fmt.Sprintf("echo $$ > %s.tmp; mv %s.tmp %s; sleep 60", pidFile, pidFile, pidFile))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var jobPID int
	for i := 0; i < 500 && jobPID == 0; i++ {
		b, _ := os.ReadFile(pidFile)
		fmt.Sscan(string(b), &jobPID)
		time.Sleep(10 * time.Millisecond)
	}
	if jobPID == 0 {
		t.Fatal("job did not start")
	}
	// Wait for at least one flush of samples (the store flushes every second).
	for i := 0; i < 100 && runStoredSamples(db) == 0; i++ {
		time.Sleep(100 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	defer runKillLeftover(jobPID)
	if err := syscall.Kill(jobPID, 0); err != nil {
		t.Fatalf("job died with torchmem: %v", err)
	}
	h, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	r, err := h.Run("last")
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != store.StatusSupervisorLost || r.Samples == 0 {
		t.Fatalf("run %s status %q samples %d", r.ID, r.Status, r.Samples)
	}
}

// runKillLeftover kills the job torchmem left behind and removes what the
// lost supervisor could not: the job's cgroups and its hook directory.
func runKillLeftover(pid int) {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	envb, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	time.Sleep(100 * time.Millisecond)
	for _, l := range strings.Split(string(b), "\n") {
		p := strings.SplitN(l, ":", 3)
		if len(p) != 3 || !strings.Contains(p[2], "/torchmem/") {
			continue
		}
		for _, ctrl := range []string{"memory", "freezer"} {
			if strings.Contains(p[1], ctrl) {
				_ = os.Remove(filepath.Join("/sys/fs/cgroup", ctrl, p[2]))
			}
		}
	}
	for _, kv := range strings.Split(string(envb), "\x00") {
		if dir, ok := strings.CutPrefix(kv, "TORCHMEM_HOOK_DIR="); ok && strings.Contains(dir, "torchmem-") {
			_ = os.RemoveAll(dir)
		}
	}
}

func runWorkerOOM(t *testing.T, bin, db string) {
	py := runTorchPython()
	if py == "" {
		t.Skip("no python3 with torch")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs a job cgroup (root) for --memory-max")
	}
	// A worker that allocates until the cgroup's OOM killer takes it.
	script := `import torch
from torch.utils.data import DataLoader, Dataset
class Greedy(Dataset):
    def __len__(self): return 10
    def __getitem__(self, i):
        hoard = []
        while True: hoard.append(bytearray(b"\x01" * (16 << 20)))
for b in DataLoader(Greedy(), num_workers=1): pass`
	_, stderr, code := runExec(bin, "run", "--db", db, "--memory-max", "400M", "--", py, "-c", script)
	want := []string{"a DataLoader worker was killed (killed_by_kernel_oom); victim DataLoader worker", "limit 400.00 MiB", "oom_kill 1", "exited unexpectedly"}
	wantCode := 1 // the main process raises "DataLoader worker ... exited unexpectedly"
	if code == 137 {
		// Under load the kernel may kill the main process too, before the
		// worker's memory is reaped (seen: oom_kill 2). Then the summary
		// must name both victims in the order the kernel took them.
		t.Log("the kernel also killed the main process; checking the two-victim summary")
		want = []string{"limit 400.00 MiB", "oom_kill 2"}
		wantCode = 137
		// "victim DataLoader worker 7 (python3), main process 5 (python3)",
		// or main first: the kernel's order.
		both := regexp.MustCompile(`victim (DataLoader worker \d+ \(python3\), main process|main process \d+ \(python3\), DataLoader worker) \d+`)
		if !both.MatchString(stderr) {
			t.Errorf("summary does not name both victims in one clause")
		}
	}
	for _, want := range want {
		if !strings.Contains(stderr, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	if code != wantCode || t.Failed() {
		t.Fatalf("code %d\n%s", code, stderr)
	}
}

func runMemoryMaxOOM(t *testing.T, bin, db string) {
	if os.Geteuid() != 0 {
		t.Skip("needs a job cgroup (root) for --memory-max")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	_, stderr, code := runExec(bin, "run", "--db", db, "--memory-max", "200M", "--", py, "-c",
		"a = []\nwhile True: a.append(bytearray(b'x' * (8 << 20)))")
	wants := []string{"killed by the kernel OOM killer", "limit of 200.00 MiB", "victim main process", "oom_kill 1"}
	if f, err := os.Open("/dev/kmsg"); err == nil {
		f.Close()
		wants = append(wants, "Killed process") // the kernel's own report
	}
	for _, want := range wants {
		if !strings.Contains(stderr, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	if code != 137 || t.Failed() {
		t.Fatalf("code %d\n%s", code, stderr)
	}
	out, _, _ := runExec(bin, "runs", "--db", db, "--status", "oom-killed", "--limit", "1")
	if !strings.Contains(out, "oom-killed") || !strings.Contains(out, "sig 9") {
		t.Fatalf("runs: %s", out)
	}
}

// runPolicyStopped: a job growing past a stop rule's threshold is ended
// by torchmem, and the history lists it as stopped (it was listed as
// killed, like a crash), with the signal that ended it.
func runPolicyStopped(t *testing.T, bin, db string) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	pol := filepath.Join(t.TempDir(), "stop.yaml")
	rules := "rules:\n  - name: grows\n    metric: job.pss_bytes\n    above: 150MB\n    action: stop\n"
	if err := os.WriteFile(pol, []byte(rules), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runExec(bin, "run", "--db", db, "--policy", pol, "--interval", "100ms", "--", py, "-c",
		"import time\na = []\nfor _ in range(600):\n    a.append(bytearray(b'x' * (4 << 20))); time.sleep(0.05)")
	if code != 143 || !strings.Contains(stderr, "policy rule grows") {
		t.Fatalf("code %d\n%s", code, stderr)
	}
	out, _, _ := runExec(bin, "runs", "--db", db, "--status", "stopped", "--limit", "1")
	if !strings.Contains(out, "stopped") || !strings.Contains(out, "sig 15") {
		t.Fatalf("runs --status stopped: %s", out)
	}
}

// runStoredSamples is how many samples the newest run has in the store.
func runStoredSamples(db string) int64 {
	h, err := store.Open(db, store.Options{})
	if err != nil {
		return 0
	}
	defer h.Close()
	r, err := h.Run("last")
	if err != nil {
		return 0
	}
	return r.Samples
}
