package jobcgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Kill SIGKILLs every process in the group and waits (up to 5 s) until the
// group is empty. It uses cgroup.kill where the kernel has it (v2, >= 5.14),
// else freeze -> SIGKILL -> thaw so that forking DataLoader workers cannot
// escape between listing and killing.
func (g *Group) Kill() error {
	if g.version == 2 {
		if err := writeFile(g.file("cgroup.kill"), "1"); err == nil {
			return g.waitEmpty(5 * time.Second)
		}
	}
	thaw := g.freeze()
	pids, err := g.Procs()
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	thaw()
	if err != nil {
		return err
	}
	// Without a freezer a worker forked mid-sweep survives one pass.
	for i := 0; i < 50; i++ {
		pids, err = g.Procs()
		if err != nil || len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return g.waitEmpty(5 * time.Second)
}

// freeze freezes the group when a freezer exists and returns the thaw
// function; without a freezer (or when freezing fails: it is an
// optimisation, the kill goes on) both are no-ops.
func (g *Group) freeze() func() {
	state, self, frozen, thawed := "", "", "", ""
	switch {
	case g.version == 2:
		state, frozen, thawed = g.file("cgroup.freeze"), "1", "0"
		self = g.file("cgroup.events")
	case g.freezer != "":
		state, frozen, thawed = filepath.Join(g.freezer, "freezer.state"), "FROZEN", "THAWED"
		self = state
	default:
		return func() {}
	}
	if err := writeFile(state, frozen); err != nil {
		return func() {}
	}
	for i := 0; i < 100; i++ {
		b, _ := os.ReadFile(self)
		if strings.Contains(string(b), "FROZEN") || strings.Contains(string(b), "frozen 1") {
			break
		}
		time.Sleep(time.Millisecond)
	}
	return func() { _ = writeFile(state, thawed) }
}

func (g *Group) waitEmpty(d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		pids, err := g.Procs()
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cgroup %s: %d processes left after SIGKILL", g.rel, len(pids))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Delete removes the group (and its v1 freezer twin). The shared
// "torchmem" parent stays: removing it could race another run creating
// its group there.
func (g *Group) Delete() error {
	var err error
	for i := 0; i < 100; i++ {
		// rmdir can race the last exiting task for a few ms.
		if err = os.Remove(g.Dir()); err == nil || errors.Is(err, os.ErrNotExist) {
			err = nil
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("rmdir %s: %w", g.Dir(), err)
	}
	if g.freezer != "" {
		_ = os.Remove(g.freezer)
	}
	return nil
}
