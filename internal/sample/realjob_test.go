package sample

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// torchPython returns an interpreter that imports torch, or "" — tests
// that need one skip with the reason.
func torchPython() string {
	for _, py := range []string{os.Getenv("TORCHMEM_TEST_PYTHON"), "/usr/bin/python3", "python3"} {
		if py == "" {
			continue
		}
		if exec.Command(py, "-c", "import torch").Run() == nil {
			return py
		}
	}
	return ""
}

// startJob runs testdata/train_dataloader.py with workers DataLoader workers
// and returns the PIDs of the main process and its workers, once all are up.
func startJob(tb testing.TB, workers int) []int {
	tb.Helper()
	pids, stop := startJobUntil(tb, workers)
	tb.Cleanup(stop)
	return pids
}

// startJobUntil is startJob whose job lives until stop is called (shared
// by several benchmarks).
func startJobUntil(tb testing.TB, workers int) ([]int, func()) {
	tb.Helper()
	py := torchPython()
	if py == "" {
		tb.Skip("no Python with torch (try TORCHMEM_TEST_PYTHON or apt-get install python3-torch)")
	}
	script, _ := filepath.Abs(filepath.Join("testdata", "train_dataloader.py"))
	cmd := exec.Command(py, script, strconv.Itoa(workers), "0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	stop := func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "ready") {
				ready <- nil
				return
			}
		}
		ready <- fmt.Errorf("training script exited before ready")
	}()
	select {
	case err := <-ready:
		if err != nil {
			stop()
			tb.Fatal(err)
		}
	case <-time.After(120 * time.Second):
		stop()
		tb.Fatal("training script not ready after 120 s")
	}
	pids := []int{cmd.Process.Pid}
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", cmd.Process.Pid, cmd.Process.Pid))
	for _, f := range strings.Fields(string(b)) {
		n, _ := strconv.Atoi(f)
		pids = append(pids, n)
	}
	if len(pids) != workers+1 {
		stop()
		tb.Fatalf("job has %d processes, want %d", len(pids), workers+1)
	}
	return pids, stop
}
