package hook

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var bare sync.Map // args -> output of a run without the hook

func bareRun(t *testing.T, py string, args ...string) string {
	t.Helper()
	key := strings.Join(append([]string{py}, args...), "\x00")
	if v, ok := bare.Load(key); ok {
		return v.(string)
	}
	out, err := exec.Command(py, args...).Output()
	if err != nil {
		t.Fatalf("bare run: %v", err)
	}
	bare.Store(key, string(out))
	return string(out)
}

func TestSurvivesClosedSocket(t *testing.T) {
	t.Parallel()
	py := torchPython(t)
	want := bareRun(t, py, "testdata/train.py", "20", "0.03")
	j := newJob(t, InstallOptions{Interval: 50 * time.Millisecond}, nil)
	j.on = func(m Message) {
		if m.Type == TypeStep && *m.Stats.Step >= 5 {
			go j.srv.Close() // Close waits for readers; not from the reading goroutine
			j.on = nil
		}
	}
	if err := j.run(t, py, nil, "testdata/train.py", "20", "0.03"); err != nil {
		t.Fatalf("job failed after the socket closed: %v\n%s", err, j.stderr.String())
	}
	if j.stdout.String() != want || j.stderr.Len() != 0 {
		t.Fatalf("output %q / %q, want %q", j.stdout.String(), j.stderr.String(), want)
	}
	if len(j.of(TypeBye)) != 0 {
		t.Fatal("messages after close")
	}
}

func TestNoServerListening(t *testing.T) {
	t.Parallel()
	py := torchPython(t)
	want := bareRun(t, py, "testdata/train.py", "20", "0.03")
	dir := t.TempDir()
	env, err := Install(dir, InstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "testdata/train.py", "20", "0.03")
	cmd.Env = MergeEnv(os.Environ(), env)
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != want {
		t.Fatalf("without a server: %v, %q", err, out)
	}
}

func TestCleanupAcknowledged(t *testing.T) {
	t.Parallel()
	py := torchPython(t)
	j := newJob(t, InstallOptions{}, nil)
	var sent int64
	j.on = func(m Message) {
		if m.Type == TypeHello {
			id, err := j.srv.Send(m.Peer.PID, Command{Type: CmdCleanup})
			if err != nil {
				t.Errorf("send: %v", err)
			}
			sent = id
		}
	}
	if err := j.run(t, py, nil, "testdata/train.py", "10", "0.05"); err != nil {
		t.Fatalf("%v: %s", err, j.stderr.String())
	}
	acks := j.of(TypeAck)
	if len(acks) != 1 || acks[0].Ack.ID != sent || !acks[0].Ack.OK || acks[0].Ack.Cmd != CmdCleanup || acks[0].Ack.Freed == nil {
		t.Fatalf("acks %+v", acks)
	}
}

func TestPeerCredentialRejection(t *testing.T) {
	t.Parallel()
	py := torchPython(t)
	want := bareRun(t, py, "testdata/train.py", "20", "0.03")
	var mu sync.Mutex
	var seen []Peer
	j := newJob(t, InstallOptions{}, func(p Peer) bool { mu.Lock(); seen = append(seen, p); mu.Unlock(); return false })
	if err := j.run(t, py, nil, "testdata/train.py", "20", "0.03"); err != nil {
		t.Fatalf("%v: %s", err, j.stderr.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(j.msgs) != 0 || j.srv.Rejected() != 1 || len(seen) != 1 || seen[0].PID <= 0 || seen[0].UID != os.Getuid() {
		t.Fatalf("rejected %d, seen %+v, messages %v", j.srv.Rejected(), seen, j.msgs)
	}
	if j.stdout.String() != want {
		t.Fatalf("output %q, want %q", j.stdout.String(), want)
	}
}

// anyPython finds an interpreter for the fake-torch test (torch not needed).
func anyPython(t *testing.T) string {
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		if p, err := exec.LookPath(py); err == nil {
			return p
		}
	}
	t.Skip("no python3")
	return ""
}

// TestCUDAPathsWithFakeTorch runs with each interpreter listed in
// TORCHMEM_TEST_PYTHONS (space-separated; e.g. 3.8 and 3.13 to check the
// hook's version range), else with the system python3.
func TestCUDAPathsWithFakeTorch(t *testing.T) {
	pys := strings.Fields(os.Getenv("TORCHMEM_TEST_PYTHONS"))
	if len(pys) == 0 {
		pys = []string{anyPython(t)}
	}
	for _, py := range pys {
		t.Run(filepath.Base(py), func(t *testing.T) {
			t.Parallel()
			testCUDAPathsWithFakeTorch(t, py)
		})
	}
}

func testCUDAPathsWithFakeTorch(t *testing.T, py string) {
	fake, _ := filepath.Abs("testdata/faketorch")
	j := newJob(t, InstallOptions{Interval: 50 * time.Millisecond, RecordHistory: 1000}, nil)
	snap := filepath.Join(j.dir, "cmd-{pid}.pickle")
	j.on = func(m Message) {
		// After step 3: the reset_peaks command must not race the step peaks.
		if m.Type == TypeStats && len(m.Stats.Devices) > 0 && m.Stats.Step != nil && *m.Stats.Step >= 3 && j.on != nil {
			j.on = nil
			for _, c := range []Command{{Type: CmdCleanup}, {Type: CmdResetPeaks}, {Type: CmdSnapshot, Path: snap}} {
				if _, err := j.srv.Send(m.Peer.PID, c); err != nil {
					t.Errorf("send %s: %v", c.Type, err)
				}
			}
		}
	}
	err := j.run(t, py, []string{"PYTHONPATH=" + fake}, "testdata/fakecuda.py", "30")
	if err == nil {
		t.Fatal("the uncaught OOM should fail the job")
	}
	h := j.of(TypeHello)
	if len(h) != 1 || h[0].Hello.CUDAInitialized || h[0].Hello.StepHook != "global" {
		t.Fatalf("hello %+v", h)
	}
	calls := strings.TrimSpace(j.stdout.String())
	if calls != "record_memory_history(stacks=python,max_entries=1000),empty_cache,reset_peak_memory_stats(0),dump_snapshot step_resets=2" {
		t.Fatalf("calls into CUDA: %q\nstderr: %s", calls, j.stderr.String())
	}
	var sawDev bool
	for _, m := range j.of(TypeStats) {
		if len(m.Stats.Devices) > 0 {
			d := m.Stats.Devices[0]
			sawDev = len(m.Stats.Devices) == 1 && d.Device == 0 && d.Reserved >= 1000 && d.Allocated == 1000 && d.NumAllocRetries == 1
		}
	}
	if !sawDev {
		t.Fatalf("no device stats: %v", j.of(TypeStats))
	}
	checkFakeStepPeaks(t, j.of(TypeStep))
	acks := j.of(TypeAck)
	if len(acks) != 3 || *acks[0].Ack.Freed != 4000 || acks[2].Ack.Path != strings.ReplaceAll(snap, "{pid}", itoa(h[0].Peer.PID)) {
		t.Fatalf("acks %+v", acks)
	}
	ooms := j.of(TypeOOM)
	if len(ooms) != 1 || ooms[0].OOM.Alloc != 400000286720 || ooms[0].OOM.DeviceFree != 147061866496 || *ooms[0].OOM.Step != 3 {
		t.Fatalf("oom %+v", ooms)
	}
	if _, err := os.Stat(ooms[0].OOM.Snapshot); err != nil {
		t.Fatalf("OOM snapshot: %v (%+v)", err, ooms[0].OOM)
	}
	ex := j.of(TypeException)
	if len(ex) != 1 || !ex[0].Exception.OOM || !strings.Contains(ex[0].Exception.Text, "Tried to allocate 400000286720 bytes") ||
		ex[0].Exception.ExcType != "torch.OutOfMemoryError" {
		t.Fatalf("exception %+v", ex)
	}
	if !strings.Contains(j.stderr.String(), "Traceback") {
		t.Fatal("the program's own traceback is gone")
	}
}

// checkFakeStepPeaks: fakecuda.py's step 1 comes before CUDA (no peaks),
// step 2 peaked at 3000/6000 and step 3, after the hook's reset, at
// 2000/5000: measured per step, not the run's high-water mark.
func checkFakeStepPeaks(t *testing.T, steps []Message) {
	t.Helper()
	want := map[int64]*StepPeak{1: nil, 2: {0, 3000, 6000}, 3: {0, 2000, 5000}}
	for _, m := range steps {
		w, ok := want[*m.Stats.Step]
		if !ok {
			continue
		}
		delete(want, *m.Stats.Step)
		if w == nil && len(m.Stats.StepPeaks) != 0 || w != nil && (len(m.Stats.StepPeaks) != 1 || m.Stats.StepPeaks[0] != *w) {
			t.Errorf("step %d: step peaks %+v, want %+v", *m.Stats.Step, m.Stats.StepPeaks, w)
		}
	}
	if len(want) != 0 {
		t.Errorf("no step message for steps %v", want)
	}
}

func TestUncaughtExceptionsReportedOutputUnchanged(t *testing.T) {
	t.Parallel()
	py := torchPython(t)
	bareCmd := exec.Command(py, "testdata/crash.py")
	var bareErr strings.Builder
	bareCmd.Stderr = &bareErr
	bareCode := 0
	if err := bareCmd.Run(); err != nil {
		bareCode = bareCmd.ProcessState.ExitCode()
	}
	j := newJob(t, InstallOptions{}, nil)
	err := j.run(t, py, nil, "testdata/crash.py")
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	if code != bareCode || code != 1 || j.stderr.String() != bareErr.String() {
		t.Fatalf("exit %d (bare %d), stderr changed:\n%s\nbare:\n%s", code, bareCode, j.stderr.String(), bareErr.String())
	}
	ex := j.of(TypeException)
	if len(ex) != 2 {
		t.Fatalf("exceptions %+v", ex)
	}
	if e := ex[0].Exception; e.Thread != "loader-thread" || e.OOM || e.ExcType != "builtins.ValueError" {
		t.Errorf("thread exception %+v", e)
	}
	if e := ex[1].Exception; !e.OOM || e.Thread != "" || !strings.Contains(e.Text, "Tried to allocate 372.53 GiB") {
		t.Errorf("main exception %+v", e)
	}
}

func TestStepCountingAcrossStepAPIs(t *testing.T) { testStepCountingAcrossStepAPIs(t, anyPython(t)) }

func testStepCountingAcrossStepAPIs(t *testing.T, py string) {
	fake, _ := filepath.Abs("testdata/faketorch")
	for _, api := range []string{"global", "code", "class"} {
		t.Run(api, func(t *testing.T) {
			t.Parallel()
			j := newJob(t, InstallOptions{StepMaxHz: 100000}, nil)
			err := j.run(t, py, []string{"PYTHONPATH=" + fake, "FAKE_TORCH_STEP_API=" + api}, "testdata/fakesteps.py")
			if err != nil || j.stdout.String() != "ok\n" {
				t.Fatalf("%v %q %s", err, j.stdout.String(), j.stderr.String())
			}
			want := map[string]string{"global": "global", "code": "wrapped", "class": "wrapped"}[api]
			if h := j.of(TypeHello); len(h) != 1 || h[0].Hello.StepHook != want {
				t.Fatalf("hello %+v", h)
			}
			var total int64
			var last int64
			for _, m := range j.of(TypeStep) {
				total += m.Stats.Steps
				last = *m.Stats.Step
			}
			if total != 7 || last != 7 {
				t.Fatalf("%s: %d steps counted, last %d; want 7", api, total, last)
			}
		})
	}
}

func TestBrokenChainedSitecustomizeReportedLikeSite(t *testing.T) {
	t.Parallel()
	testBrokenChainedSitecustomize(t, anyPython(t))
}

func testBrokenChainedSitecustomize(t *testing.T, py string) {
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "sitecustomize.py"), []byte("raise KeyError('boom')\n"), 0o644)
	run := func(env []string) (string, string) {
		cmd := exec.Command(py, "-c", "print('main ran')")
		cmd.Env = env
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String()
	}
	base := append(os.Environ(), "PYTHONPATH="+bad, "PYTHONDONTWRITEBYTECODE=1")
	wantOut, wantErr := run(base)
	env, err := Install(t.TempDir(), InstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gotOut, gotErr := run(MergeEnv(base, env))
	if gotOut != wantOut || gotErr != wantErr || !strings.Contains(gotErr, "KeyError: 'boom'") {
		t.Fatalf("hooked %q / %q, bare %q / %q", gotOut, gotErr, wantOut, wantErr)
	}
}

func TestNoTorchNoImportNoConnection(t *testing.T) {
	t.Parallel()
	testNoTorchNoImportNoConnection(t, anyPython(t))
}

func testNoTorchNoImportNoConnection(t *testing.T, py string) {
	j := newJob(t, InstallOptions{}, nil)
	err := j.run(t, py, nil, "-c", "import sys, threading; print('torch' in sys.modules, 'torchmem_hook' in sys.modules, threading.active_count())")
	if err != nil {
		t.Fatal(err)
	}
	if got := j.stdout.String(); got != "False True 1\n" {
		t.Fatalf("stdout %q: the hook must arm without importing torch or starting threads", got)
	}
	if len(j.msgs) != 0 {
		t.Fatalf("a process without torch connected: %v", j.msgs)
	}
}

// TestOldPythonsUntouched: interpreters below 3.6 (listed in
// TORCHMEM_TEST_OLD_PYTHONS, e.g. 2.7 and 3.5) still run their own
// sitecustomize and get no hook.
func TestOldPythonsUntouched(t *testing.T) {
	pys := strings.Fields(os.Getenv("TORCHMEM_TEST_OLD_PYTHONS"))
	if len(pys) == 0 {
		t.Skip("set TORCHMEM_TEST_OLD_PYTHONS to interpreters older than 3.6 to run")
	}
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "sitecustomize.py"), []byte("print('other sitecustomize')\n"), 0o644)
	env, err := Install(t.TempDir(), InstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, py := range pys {
		cmd := exec.Command(py, "-c", "import sys; print('hooked' if 'torchmem_hook' in sys.modules else 'plain')")
		cmd.Env = MergeEnv(append(os.Environ(), "PYTHONPATH="+other, "PYTHONDONTWRITEBYTECODE=1"), env)
		out, err := cmd.CombinedOutput()
		if err != nil || string(out) != "other sitecustomize\nplain\n" {
			t.Errorf("%s: %v %q", py, err, out)
		}
	}
}
