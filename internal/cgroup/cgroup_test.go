package cgroup

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func u(v uint64) *uint64 { return &v }

func eq(p *uint64, v uint64) bool { return p != nil && *p == v }

func TestDetect(t *testing.T) {
	tests := []struct {
		file     string
		text     string
		mode     Mode
		memPoint string
		v2       bool
	}{
		{file: "mountinfo-hybrid-debian12.txt", mode: ModeHybrid, memPoint: "/sys/fs/cgroup/memory"},
		{file: "mountinfo-v2-h200.txt", mode: ModeV2, memPoint: "/sys/fs/cgroup", v2: true},
		{
			// CentOS 7: v1 only, systemd's named hierarchy plus controllers.
			text: "25 18 0:21 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,xattr,release_agent=/usr/lib/systemd/systemd-cgroups-agent,name=systemd\n" +
				"30 18 0:26 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
			mode: ModeV1, memPoint: "/sys/fs/cgroup/memory",
		},
		{
			// A container without a cgroup namespace: the mount shows a subtree.
			text: "1 0 0:26 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n",
			mode: ModeV1, memPoint: "/sys/fs/cgroup/memory",
		},
		{text: "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n", mode: ModeNone},
	}
	for _, tt := range tests {
		var h Hierarchy
		var err error
		if tt.file != "" {
			h, err = Detect(filepath.Join("testdata", tt.file))
		} else {
			h, err = ParseMountinfo(strings.NewReader(tt.text))
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Mode != tt.mode {
			t.Errorf("%s%q: mode %s, want %s", tt.file, tt.text, h.Mode, tt.mode)
		}
		if tt.mode == ModeNone {
			if _, _, err := h.MemoryDir("/x"); err == nil {
				t.Error("no cgroups: MemoryDir did not fail")
			}
			continue
		}
		dir, v2, err := h.MemoryDir("/docker/abc/job")
		if err != nil || v2 != tt.v2 || !strings.HasPrefix(dir, tt.memPoint) {
			t.Errorf("%s: MemoryDir = %q v2=%v %v", tt.file, dir, v2, err)
		}
	}
	h, _ := ParseMountinfo(strings.NewReader("1 0 0:26 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n"))
	if dir, _, _ := h.MemoryDir("/docker/abc/job"); dir != "/sys/fs/cgroup/memory/job" {
		t.Errorf("container subtree: dir %q", dir)
	}
}

func TestReadV1OOM(t *testing.T) {
	m, err := ReadMemoryDir(filepath.Join("testdata", "v1", "oomtest"), false)
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != 1 || m.Max != (Limit{Bytes: 104857600}) || m.UsageBytes != 323584 || !eq(m.PeakBytes, 104857600) {
		t.Errorf("v1 = %+v", m)
	}
	e := m.Events
	if !eq(e.OOMKill, 1) || !eq(e.Max, 1490) || e.UnderOOM == nil || *e.UnderOOM || e.OOM != nil || e.High != nil {
		t.Errorf("v1 events = %+v", e)
	}
	if m.High != nil || m.Pressure != nil {
		t.Error("v1 has no high limit and no pressure")
	}
	if h, ok := m.Headroom(); !ok || h != 104857600-323584 {
		t.Errorf("headroom = %d %v", h, ok)
	}
}

func TestReadV1RootUnlimited(t *testing.T) {
	m, err := ReadMemoryDir(filepath.Join("testdata", "v1", "root"), false)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Max.Unlimited || m.SwapMax == nil || !m.SwapMax.Unlimited || !m.SwapMaxIncludesMemory {
		t.Errorf("root = %+v", m)
	}
	if m.SwapBytes != nil || m.UsageBytes != 1309638656 { // no memory.stat captured
		t.Errorf("root usage/swap = %d %v", m.UsageBytes, m.SwapBytes)
	}
	if _, ok := m.Headroom(); ok {
		t.Error("unlimited group has headroom")
	}
}

func TestReadV2OOM(t *testing.T) {
	m, err := ReadMemoryDir(filepath.Join("testdata", "v2", "oomtest"), true)
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != 2 || m.Max.Bytes != 104857600 || m.High == nil || !m.High.Unlimited || !eq(m.PeakBytes, 104857600) {
		t.Errorf("v2 = %+v", m)
	}
	e := m.Events
	want := Events{Source: "memory.events", Low: u(0), High: u(0), Max: u(35), OOM: u(1), OOMKill: u(1), OOMGroupKill: u(0)}
	wj, _ := json.Marshal(want)
	gj, _ := json.Marshal(e)
	if string(wj) != string(gj) {
		t.Errorf("events = %s\nwant %s", gj, wj)
	}
	if m.Pressure == nil || m.Pressure.Full == nil || m.Pressure.Full.TotalMicros != 202 {
		t.Errorf("pressure = %+v", m.Pressure)
	}
	if m.SwapMax == nil || m.SwapMax.Unlimited || m.SwapMax.Bytes != 0 || m.SwapMaxIncludesMemory {
		t.Errorf("swap max = %+v", m.SwapMax)
	}
}

func TestReadMissingDir(t *testing.T) {
	if _, err := ReadMemoryDir(filepath.Join("testdata", "nope"), true); err == nil {
		t.Error("missing dir did not fail")
	}
}

func TestLimitJSON(t *testing.T) {
	for in, want := range map[string]Limit{
		"max": {Unlimited: true}, "9223372036854771712": {Unlimited: true},
		"-1": {Unlimited: true}, "104857600\n": {Bytes: 104857600},
	} {
		got, err := parseLimit(in)
		if err != nil || got != want {
			t.Errorf("parseLimit(%q) = %+v, %v", in, got, err)
		}
		b, _ := json.Marshal(got)
		var back Limit
		if err := json.Unmarshal(b, &back); err != nil || back != got {
			t.Errorf("round trip %s: %+v %v", b, back, err)
		}
	}
	if _, err := parseLimit("lots"); err == nil {
		t.Error("bad limit accepted")
	}
}

func TestParseProcCgroup(t *testing.T) {
	tests := []struct {
		in   string
		want Path
		bad  bool
	}{
		{in: "9:name=systemd:/\n4:memory:/process_api/8dfc\n0::/\n", want: Path{Path: "/process_api/8dfc"}},
		{in: "0::/user.slice/job.scope\n", want: Path{Path: "/user.slice/job.scope", V2: true}},
		{in: "3:cpu,cpuacct,memory:/a\n", want: Path{Path: "/a"}},
		{in: "garbage", bad: true},
		{in: "1:cpu:/\n", bad: true},
	}
	for _, tt := range tests {
		got, err := parseProcCgroup(tt.in)
		if (err != nil) != tt.bad || (!tt.bad && got != tt.want) {
			t.Errorf("parseProcCgroup(%q) = %+v, %v", tt.in, got, err)
		}
	}
	if _, err := ProcessPath(t.TempDir(), 1); err == nil {
		t.Error("missing process did not fail")
	}
	if _, err := os.Stat("/proc/self/cgroup"); err == nil {
		if _, err := ProcessPath("/proc", os.Getpid()); err != nil {
			t.Errorf("own process: %v", err)
		}
	}
}

// Rebase moves the mounts under /sys onto a fixture's SysRoot and leaves
// a mount elsewhere where it is.
func TestRebase(t *testing.T) {
	h := Hierarchy{MemoryV1: &Mount{Point: "/sys/fs/cgroup/memory", Root: "/"}, Unified: &Mount{Point: "/run/cgroup2", Root: "/"}}
	h.Rebase("fixture/sys")
	if h.MemoryV1.Point != "fixture/sys/fs/cgroup/memory" || h.Unified.Point != "/run/cgroup2" {
		t.Errorf("rebased to %q and %q", h.MemoryV1.Point, h.Unified.Point)
	}
	var none Hierarchy
	none.Rebase("fixture/sys") // no mounts: nothing to move, no panic
}

// Events round-trip through JSON, and a summary stored with jobcgroup's
// former int64 copy (under_oom 0/1) still decodes.
func TestEventsJSON(t *testing.T) {
	n, yes := uint64(3), true
	in := Events{Source: "memory.oom_control+memory.failcnt", Max: &n, OOMKill: &n, UnderOOM: &yes, OOMKillDisable: &yes}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out Events
	if err := json.Unmarshal(b, &out); err != nil || *out.Max != 3 || *out.OOMKill != 3 || !*out.UnderOOM || !*out.OOMKillDisable || out.Source != in.Source {
		t.Fatalf("round trip %s: %+v %v", b, out, err)
	}
	for text, want := range map[string]*bool{`{"max": 457, "oom_kill": 1, "under_oom": 0}`: new(bool), `{"under_oom": 1}`: &yes, `{"max": 1}`: nil} {
		var e Events
		if err := json.Unmarshal([]byte(text), &e); err != nil || (want == nil) != (e.UnderOOM == nil) || want != nil && *want != *e.UnderOOM {
			t.Errorf("%s: %+v %v", text, e, err)
		}
	}
	if err := json.Unmarshal([]byte(`{"under_oom": 2}`), &out); err == nil {
		t.Error("under_oom 2 accepted")
	}
}
