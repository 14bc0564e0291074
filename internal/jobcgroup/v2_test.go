package jobcgroup

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeV2 builds a fixture tree: ProcRoot/self/{mountinfo,cgroup} pointing
// at a cgroup2 "mount" directory under t.TempDir().
func fakeV2(t *testing.T, own string) (procRoot, mount string) {
	t.Helper()
	dir := t.TempDir()
	procRoot, mount = filepath.Join(dir, "proc"), filepath.Join(dir, "cgroup")
	must(t, os.MkdirAll(filepath.Join(procRoot, "self"), 0o755))
	must(t, os.MkdirAll(filepath.Join(mount, own), 0o755))
	mi := "30 24 0:26 / " + mount + " rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"
	must(t, os.WriteFile(filepath.Join(procRoot, "self", "mountinfo"), []byte(mi), 0o644))
	must(t, os.WriteFile(filepath.Join(procRoot, "self", "cgroup"), []byte("0::"+own+"\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(mount, "cgroup.subtree_control"), []byte("cpu memory\n"), 0o644))
	return procRoot, mount
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestParseMountinfo(t *testing.T) {
	b, err := os.ReadFile("testdata/mountinfo-v1")
	must(t, err)
	h, err := parseMountinfo(strings.NewReader(string(b)))
	must(t, err)
	if h.version != 1 || h.mount != "/sys/fs/cgroup/memory" || h.freezer != "/sys/fs/cgroup/freezer" {
		t.Fatalf("v1: %+v", h)
	}
	h.own = ownCgroup("4:memory:/process_api/fc3e\n0::/\n", h)
	if h.own != "/process_api/fc3e" {
		t.Fatalf("own = %q", h.own)
	}
	b, err = os.ReadFile("testdata/mountinfo-v2")
	must(t, err)
	h, err = parseMountinfo(strings.NewReader(string(b)))
	must(t, err)
	if h.version != 2 || h.mount != "/sys/fs/cgroup" {
		t.Fatalf("v2: %+v", h)
	}
	if got := ownCgroup("0::/user.slice/user-1000.slice/session-3.scope\n", h); got != "/user.slice/user-1000.slice/session-3.scope" {
		t.Fatalf("own = %q", got)
	}
	if _, err := parseMountinfo(strings.NewReader("garbage\n1 2 3\n")); err == nil {
		t.Fatal("want error without cgroup mounts")
	}
}

// A v2 fixture tree is not a kernel: mkdir gives no interface files, so
// writing memory.max fails after the directories were made. That is the
// "create fails halfway" path: nothing may be left behind.
func TestCreateV2UndoesHalfwayFailure(t *testing.T) {
	procRoot, mount := fakeV2(t, "/")
	max := int64(200 << 20)
	_, _, err := Create(Options{ProcRoot: procRoot, Name: "run-1", Limits: Limits{MemoryMax: &max}})
	if err == nil {
		t.Fatal("want error: fixture has no memory.max")
	}
	if _, err := os.Stat(filepath.Join(mount, "torchmem")); !os.IsNotExist(err) {
		t.Fatalf("torchmem parent left behind: %v", err)
	}
	// subtree_control of the root was enabled (it already had memory).
	b, _ := os.ReadFile(filepath.Join(mount, "cgroup.subtree_control"))
	if !strings.Contains(string(b), "memory") {
		t.Fatalf("subtree_control = %q", b)
	}
}

func v2Group(t *testing.T) *Group {
	_, mount := fakeV2(t, "/")
	g := &Group{version: 2, mount: mount, rel: "/torchmem/run-1"}
	must(t, os.MkdirAll(g.Dir(), 0o755))
	for _, f := range []string{"memory.max", "memory.high", "memory.swap.max", "cgroup.kill", "cgroup.procs"} {
		must(t, os.WriteFile(g.file(f), nil, 0o644))
	}
	must(t, os.WriteFile(g.file("memory.events"), []byte("low 0\nhigh 3\nmax 7\noom 1\noom_kill 1\noom_group_kill 0\n"), 0o644))
	return g
}

func TestV2LimitsEventsKill(t *testing.T) {
	g := v2Group(t)
	max, high, swap := int64(64<<30), int64(60<<30), int64(0)
	notes, err := g.SetLimits(Limits{MemoryMax: &max, MemoryHigh: &high, SwapMax: &swap})
	must(t, err)
	if len(notes) != 0 {
		t.Fatalf("notes: %v", notes)
	}
	for f, want := range map[string]string{"memory.max": "68719476736", "memory.high": "64424509440", "memory.swap.max": "0"} {
		if b, _ := os.ReadFile(g.file(f)); string(b) != want {
			t.Errorf("%s = %q want %q", f, b, want)
		}
	}
	if l := g.Limit(); l == nil || *l != max {
		t.Errorf("Limit = %v", l)
	}
	ev, err := g.Events()
	must(t, err)
	if *ev.Max != 7 || *ev.High != 3 || *ev.OOMKill != 1 || ev.UnderOOM != nil {
		t.Fatalf("events %+v", ev)
	}
	must(t, g.Kill())
	if b, _ := os.ReadFile(g.file("cgroup.kill")); string(b) != "1" {
		t.Fatalf("cgroup.kill = %q", b)
	}
	must(t, os.WriteFile(g.file("memory.events"), []byte("oom 1\nbogus\n"), 0o644))
	if _, err := g.Events(); err == nil || !strings.Contains(err.Error(), "memory.events") {
		t.Fatalf("bad memory.events: err = %v", err)
	}
}

func TestV2WatchInotify(t *testing.T) {
	g := v2Group(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := g.Watch(ctx, nil)
	must(t, err)
	must(t, os.WriteFile(g.file("memory.events"), []byte("oom 2\noom_kill 2\n"), 0o644))
	select {
	case ev := <-ch:
		if ev.Kind != "events" {
			t.Fatalf("kind %q", ev.Kind)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no inotify event for memory.events")
	}
}

func TestSweepEmptyLeftovers(t *testing.T) {
	parent := t.TempDir()
	old := time.Now().Add(-time.Hour)
	mk := func(name, procs string, mtime time.Time) string {
		d := filepath.Join(parent, name)
		must(t, os.MkdirAll(d, 0o755))
		must(t, os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(procs), 0o644))
		// A fixture dir with a file is not removable; cgroupfs dirs are.
		os.Remove(filepath.Join(d, "cgroup.procs"))
		if procs != "" {
			must(t, os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(procs), 0o644))
		}
		must(t, os.Chtimes(d, mtime, mtime))
		return d
	}
	lost := mk("run-lost", "", old)
	busy := mk("run-busy", "4242\n", old)
	young := mk("run-young", "", time.Now())
	other := mk("not-a-run", "", old)
	sweepEmpty(parent, time.Now())
	for d, want := range map[string]bool{lost: false, busy: true, young: true, other: true} {
		_, err := os.Stat(d)
		if (err == nil) != want {
			t.Errorf("%s exists=%v, want %v", filepath.Base(d), err == nil, want)
		}
	}
}
