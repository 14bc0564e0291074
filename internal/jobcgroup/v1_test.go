package jobcgroup

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"
)

// realV1 creates a real group on this host's memory hierarchy, or skips.
func realV1(t *testing.T, limits Limits) *Group {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create memory cgroups")
	}
	h, err := detect("/proc")
	if err != nil || h.version != 1 {
		t.Skipf("no cgroup v1 memory hierarchy here (%v)", err)
	}
	g, notes, err := Create(Options{ProcRoot: "/proc", Name: fmt.Sprintf("test-%d-%d", os.Getpid(), time.Now().UnixNano()), Limits: limits})
	if err != nil {
		t.Skipf("cannot create a memory cgroup: %v", err)
	}
	t.Logf("group %s notes %v", g.Dir(), notes)
	t.Cleanup(func() { _ = g.Kill(); _ = g.Delete() })
	return g
}

func TestV1RealOOMAndKill(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 to allocate memory")
	}
	max := int64(64 << 20)
	g := realV1(t, Limits{MemoryMax: &max})
	if l := g.Limit(); l == nil || *l != max {
		t.Fatalf("limit %v", l)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := g.Watch(ctx, []int64{16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	// The child waits on stdin until it is in the group, then allocates.
	cmd := exec.Command(py, "-c", "import sys; sys.stdin.read(1)\na=[]\nwhile True: a.append(bytearray(8<<20))")
	w, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := g.Add(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("x"))
	kinds := map[string]bool{}
	timeout := time.After(20 * time.Second)
	for !kinds["oom"] || !kinds["threshold"] {
		select {
		case ev := <-ch:
			kinds[ev.Kind] = true
		case <-timeout:
			t.Fatalf("events seen %v", kinds)
		}
	}
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != -1 {
		t.Fatalf("want OOM-killed child, got %v", err)
	}
	ev, err := g.Events()
	if err != nil || ev.OOMKill == nil || *ev.OOMKill < 1 || ev.Max == nil || *ev.Max < 1 {
		t.Fatalf("events %+v err %v", ev, err)
	}
}

func TestV1KillReapsForkedChildren(t *testing.T) {
	g := realV1(t, Limits{})
	// A shell that leaves background sleepers behind, like DataLoader workers.
	cmd := exec.Command("/bin/sh", "-c", "read x; sleep 300 & sleep 300 & sleep 300 & wait")
	w, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := g.Add(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("\n"))
	for i := 0; i < 200; i++ {
		if p, _ := g.Procs(); len(p) >= 4 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := g.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if p, _ := g.Procs(); len(p) != 0 {
		t.Fatalf("left: %v", p)
	}
	if err := g.Delete(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(g.Dir()); !os.IsNotExist(err) {
		t.Fatalf("group still there: %v", err)
	}
}
