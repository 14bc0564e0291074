package cgroup

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestLiveMemoryCgroup creates a real memory cgroup with a 64 MiB limit,
// puts a process in it, and reads the group back through the same path a
// process's /proc/<pid>/cgroup gives.
func TestLiveMemoryCgroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to create a memory cgroup")
	}
	h, err := Detect("/proc/self/mountinfo")
	if err != nil {
		t.Skipf("no mountinfo: %v", err)
	}
	dir, v2, err := h.MemoryDir(fmt.Sprintf("/torchmem-cgroup-test-%d", os.Getpid()))
	if err != nil {
		t.Skipf("no memory cgroup: %v", err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("cannot create a memory cgroup here (%s): %v", h.Mode, err)
	}
	limitFile := "memory.limit_in_bytes"
	if v2 {
		limitFile = "memory.max"
	}
	const limit = 64 << 20
	if err := os.WriteFile(filepath.Join(dir, limitFile), []byte(strconv.Itoa(limit)), 0o644); err != nil {
		os.Remove(dir)
		t.Skipf("cannot set a limit (%s): %v", h.Mode, err)
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		for i := 0; i < 50 && os.Remove(dir) != nil; i++ {
			time.Sleep(20 * time.Millisecond)
		}
	})
	pid := cmd.Process.Pid
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		t.Fatalf("add %d: %v", pid, err)
	}
	p, err := ProcessPath("/proc", pid)
	if err != nil {
		t.Fatal(err)
	}
	m, err := h.ReadMemory(p.Path)
	if err != nil {
		t.Fatal(err)
	}
	if m.Dir != dir || m.Max.Unlimited || m.Max.Bytes != limit {
		t.Errorf("read back %+v, want dir %s and max %d", m, dir, limit)
	}
	if m.Events.OOMKill != nil && *m.Events.OOMKill != 0 {
		t.Errorf("fresh group has oom kills: %d", *m.Events.OOMKill)
	}
	if hr, ok := m.Headroom(); !ok || hr > limit {
		t.Errorf("headroom %d %v", hr, ok)
	}
}
