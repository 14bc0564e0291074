package hook

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// torchPython returns an interpreter that imports torch, or skips: always
// under -short, where the hook's Python runs only against the fake torch
// of testdata (anyPython), in seconds instead of minutes.
func torchPython(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: starts real PyTorch processes (seconds each); make test runs them")
	}
	for _, py := range []string{os.Getenv("TORCHMEM_TEST_PYTHON"), "/usr/bin/python3", "python3"} {
		if py == "" {
			continue
		}
		if err := exec.Command(py, "-c", "import torch").Run(); err == nil {
			return py
		}
	}
	t.Skip("no python3 with torch installed (Debian: apt install python3-torch; or set TORCHMEM_TEST_PYTHON)")
	return ""
}

type job struct {
	dir  string
	srv  *Server
	env  []string
	msgs []Message
	// on, when set, sees each message as it arrives (to send commands).
	on     func(m Message)
	stdout bytes.Buffer
	stderr bytes.Buffer
}

func newJob(t *testing.T, o InstallOptions, accept func(Peer) bool) *job {
	t.Helper()
	dir, err := os.MkdirTemp("", "tmh")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	env, err := Install(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := Listen(dir, Options{Accept: accept})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return &job{dir: dir, srv: srv, env: env}
}

// run runs py args under the hook, collecting messages until the process exits.
func (j *job) run(t *testing.T, py string, extraEnv []string, args ...string) error {
	t.Helper()
	cmd := exec.Command(py, args...)
	// No __pycache__ in testdata; PYTHONDONTWRITEBYTECODE changes no output.
	cmd.Env = MergeEnv(append(os.Environ(), append(extraEnv, "PYTHONDONTWRITEBYTECODE=1")...), j.env)
	cmd.Stdout, cmd.Stderr = &j.stdout, &j.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	exited := false
	grace := time.After(time.Hour)
	msgs := j.srv.Messages()
	for {
		select {
		case m, ok := <-msgs:
			if !ok {
				msgs = nil // server closed by the test
				continue
			}
			j.msgs = append(j.msgs, m)
			if j.on != nil {
				j.on(m)
			}
		case err = <-done:
			exited = true
			grace = time.After(300 * time.Millisecond)
			done = nil
		case <-grace:
			return err
		case <-time.After(60 * time.Second):
			if !exited {
				cmd.Process.Kill()
				t.Fatalf("job did not finish; stderr: %s", j.stderr.String())
			}
		}
	}
}

func (j *job) of(typ string) []Message {
	var out []Message
	for _, m := range j.msgs {
		if m.Type == typ {
			out = append(out, m)
		}
	}
	return out
}

func TestTrainingLoopReportsHelloStatsSteps(t *testing.T) {
	t.Parallel()
	py := torchPython(t)
	j := newJob(t, InstallOptions{Interval: 100 * time.Millisecond}, nil) // 20 Hz step cap: 50 Hz steps coalesce
	if err := j.run(t, py, nil, "testdata/train.py", "30", "0.02"); err != nil {
		t.Fatalf("job failed: %v\n%s", err, j.stderr.String())
	}
	hellos := j.of(TypeHello)
	if len(hellos) != 1 {
		t.Fatalf("%d hellos; messages %v; stderr %s", len(hellos), j.msgs, j.stderr.String())
	}
	h := hellos[0].Hello
	if h.PID != hellos[0].Peer.PID || h.Worker || h.Torch == "" || h.StepHook == "none" || h.CUDAInitialized {
		t.Fatalf("hello %+v (peer %+v)", h, hellos[0].Peer)
	}
	if len(j.of(TypeStats)) < 3 {
		t.Fatalf("only %d stats messages in a 0.6 s loop at 100 ms", len(j.of(TypeStats)))
	}
	steps := j.of(TypeStep)
	var total int64
	for _, m := range steps {
		total += m.Stats.Steps
	}
	last := steps[len(steps)-1].Stats
	if total != 30 || *last.Step != 30 {
		t.Fatalf("steps counted %d, last step %v; want 30", total, *last.Step)
	}
	byes := j.of(TypeBye)
	if len(byes) != 1 || *byes[0].Bye.Step != 30 {
		t.Fatalf("bye %+v", byes)
	}
	if !strings.HasPrefix(j.stdout.String(), "loss ") || j.stderr.Len() != 0 {
		t.Fatalf("output changed: %q / %q", j.stdout.String(), j.stderr.String())
	}
}

func TestDataLoaderWorkersSayWhoTheyAre(t *testing.T) {
	for _, ctx := range []string{"fork", "spawn"} {
		t.Run(ctx, func(t *testing.T) {
			t.Parallel()
			testDataLoaderWorkers(t, ctx)
		})
	}
}

func testDataLoaderWorkers(t *testing.T, ctx string) {
	py := torchPython(t)
	j := newJob(t, InstallOptions{Interval: 50 * time.Millisecond}, nil)
	if err := j.run(t, py, nil, "testdata/loader.py", ctx); err != nil {
		t.Fatalf("job failed: %v\n%s", err, j.stderr.String())
	}
	var main, workers int
	workerPIDs := map[int]bool{}
	for _, m := range j.of(TypeHello) {
		if m.Hello.Worker {
			workers++
			workerPIDs[m.Peer.PID] = true
			if m.Hello.WorkerID == nil || !m.Hello.Child {
				t.Errorf("worker hello %+v", m.Hello)
			}
		} else {
			main++
		}
	}
	if main != 1 || workers != 2 {
		t.Fatalf("%d main and %d worker hellos, want 1 and 2; stderr %s", main, workers, j.stderr.String())
	}
	for _, m := range append(j.of(TypeStats), j.of(TypeStep)...) {
		if workerPIDs[m.Peer.PID] {
			t.Fatalf("worker %d sent %s", m.Peer.PID, m.Type)
		}
	}
}

func TestChainsExistingSitecustomize(t *testing.T) {
	t.Parallel()
	py := torchPython(t)
	j := newJob(t, InstallOptions{}, nil)
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "sitecustomize.py"), []byte("import os\nos.environ['CHAINED'] = 'yes'\nprint('chained sitecustomize ran')\n"), 0o644)
	err := j.run(t, py, []string{"PYTHONPATH=" + other}, "-c", "import os, sys, torch; print(os.environ.get('CHAINED'), 'torchmem_hook' in sys.modules)")
	if err != nil {
		t.Fatalf("%v: %s", err, j.stderr.String())
	}
	if got := j.stdout.String(); got != "chained sitecustomize ran\nyes True\n" {
		t.Fatalf("stdout %q", got)
	}
	if len(j.of(TypeHello)) != 1 {
		t.Fatalf("hook did not report: %v", j.msgs)
	}
}

func TestTorchrunRanksAndLauncher(t *testing.T) {
	t.Parallel()
	py := torchPython(t)
	j := newJob(t, InstallOptions{Interval: 100 * time.Millisecond}, nil)
	err := j.run(t, py, nil, "testdata/launcher/torchrun", "testdata/ranks.py")
	if err != nil {
		t.Fatalf("%v\n%s", err, j.stderr.String())
	}
	var launchers int
	ranks := map[int]bool{}
	for _, m := range j.of(TypeHello) {
		h := m.Hello
		switch {
		case h.Launcher:
			launchers++
		case h.Rank != nil && h.LocalRank != nil && h.WorldSize != nil && *h.WorldSize == 2:
			ranks[*h.Rank] = true
		default:
			t.Errorf("unexpected hello %+v", h)
		}
	}
	if launchers != 1 || !ranks[0] || !ranks[1] {
		t.Fatalf("launchers %d, ranks %v", launchers, ranks)
	}
}
