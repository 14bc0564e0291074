package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/torchmem/torchmem/internal/gpu"
	"github.com/torchmem/torchmem/internal/sample"
	"github.com/torchmem/torchmem/internal/sample/sampletest"
)

func i64(v int64) *int64 { return &v }

func fixtureSampler(t *testing.T, workers int) *sample.Sampler {
	t.Helper()
	tree, err := sampletest.WriteJobTree(t.TempDir(), workers)
	if err != nil {
		t.Fatal(err)
	}
	g := gpu.NewFake(gpu.Info{DriverVersion: "580.159.04"},
		[]gpu.Device{{Index: 0, Name: "NVIDIA H200", TotalBytes: 150754820096, UsedBytes: 4800000000, ReservedBytes: i64(500000000), NUMANode: -1}},
		[]gpu.Process{{GPUIndex: 0, PID: sampletest.MainPID, HostPID: sampletest.MainPID, UsedBytes: i64(4 << 30)},
			{GPUIndex: 0, HostPID: 777, Unmapped: true, UsedBytes: i64(1 << 30)}})
	clock := func() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) }
	s, err := sample.New(sample.Options{ProcRoot: tree.ProcRoot, SysRoot: tree.SysRoot, GPU: g, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func fixtureSample(t *testing.T, workers int) *sample.Sample {
	smp, err := fixtureSampler(t, workers).Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return smp
}

func TestRenderFits80AndFolds(t *testing.T) {
	smp := fixtureSample(t, 32)
	lines := Render(smp, ViewOptions{})
	text := strings.Join(lines, "\n")
	for _, l := range lines {
		if n := len([]rune(l)); n > 80 {
			t.Errorf("line of %d columns: %q", n, l)
		}
		if strings.Contains(l, "\x1b") {
			t.Errorf("escape sequence without color: %q", l)
		}
	}
	for _, want := range []string{"JOB 2000  33 procs (32 workers)", "+32", "32 workers folded", "H200", "2000:4.0G", "host777:1.0G", "cgroup v1", "total", "pss/uss smaps_rollup"} {
		if !strings.Contains(text, want) {
			t.Errorf("view lacks %q:\n%s", want, text)
		}
	}
	expanded := Render(smp, ViewOptions{Expand: true})
	if len(expanded) != len(lines)+31 {
		t.Errorf("expanded view has %d lines, folded %d", len(expanded), len(lines))
	}
}

func TestRenderColorAndFilter(t *testing.T) {
	smp := fixtureSample(t, 2)
	colored := strings.Join(Render(smp, ViewOptions{Color: true}), "\n")
	if !strings.Contains(colored, "\x1b[") {
		t.Error("color view has no escapes")
	}
	none := strings.Join(Render(smp, ViewOptions{Filter: "no-such-thing"}), "\n")
	if strings.Contains(none, "JOB") || !strings.Contains(none, `no PyTorch or GPU jobs matching "no-such-thing"`) {
		t.Errorf("filtered view:\n%s", none)
	}
	if !strings.Contains(strings.Join(Render(smp, ViewOptions{Filter: "TRAIN_dataloader"}), "\n"), "JOB 2000") {
		t.Error("case-insensitive filter did not match the command line")
	}
}

func TestSortOrders(t *testing.T) {
	smp := fixtureSample(t, 4)
	// The main process has the most PSS and RSS: it leads its workers'
	// row... and with sort pid the children come in PID order.
	lines := Render(smp, ViewOptions{Sort: "pid", Expand: true})
	var pids []string
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) > 1 && (f[1] == "worker" || f[1] == "main") {
			pids = append(pids, f[0])
		}
	}
	if strings.Join(pids, ",") != "2000,2001,2002,2003,2004" {
		t.Errorf("pid order %v", pids)
	}
	if nextSort("pid") != "pss" || !ValidSort("gpu") || ValidSort("cpu") {
		t.Error("sort key cycle")
	}
}

func key(s string) tea.KeyPressMsg {
	switch s {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	}
	return tea.KeyPressMsg{Code: rune(s[0]), Text: s}
}

func TestModelKeys(t *testing.T) {
	s := fixtureSampler(t, 4)
	m := &model{cfg: Config{Sampler: s, Interval: time.Second}, ctx: context.Background(), view: ViewOptions{Sort: "pss"}}
	msg := m.Init()()
	m.Update(msg)
	if m.last == nil || !strings.Contains(m.View().Content, "JOB 2000") {
		t.Fatalf("first view:\n%s", m.View().Content)
	}
	m.Update(key("s"))
	if m.view.Sort != "rss" {
		t.Errorf("s: sort %q", m.view.Sort)
	}
	for _, k := range []string{"/", "x", "y", "backspace", "backspace", "z", "enter"} {
		m.Update(key(k))
	}
	if m.view.Filter != "z" || m.editing {
		t.Errorf("filter %q editing %v", m.view.Filter, m.editing)
	}
	m.Update(key("e"))
	m.Update(key("p"))
	if !m.view.Expand || !m.refresh {
		t.Error("e/p keys")
	}
	if _, cmd := m.Update(key("q")); cmd == nil {
		t.Error("q returned no command")
	} else if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Error("q does not quit")
	}
	m.Update(tea.WindowSizeMsg{Width: 60, Height: 5})
	if got := strings.Count(m.View().Content, "\n"); got != 4 {
		t.Errorf("5-line terminal got %d lines", got+1)
	}
}

func TestRenderV2CgroupLine(t *testing.T) {
	tree, err := sampletest.WriteJobTreeV2(t.TempDir(), 1)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sample.New(sample.Options{ProcRoot: tree.ProcRoot, SysRoot: tree.SysRoot})
	if err != nil {
		t.Fatal(err)
	}
	smp, err := s.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(Render(smp, ViewOptions{}), "\n")
	for _, want := range []string{"cgroup v2", "used 276K of 100M (100M left)", "PSI 0.00%", "oom_kill 1", "…"} {
		if !strings.Contains(text, want) {
			t.Errorf("v2 view lacks %q:\n%s", want, text)
		}
	}
}

// A long notice wraps at spaces instead of losing its end to the 80-column
// cut: the end says what to do about it.
func TestRenderWrapsNotices(t *testing.T) {
	smp := fixtureSample(t, 1)
	smp.Notices = []string{"using nvidia-smi (slower, whole MiB): NVML unavailable: dlopen: libnvidia-ml.so.1: cannot open shared object file: No such file or directory"}
	lines := Render(smp, ViewOptions{})
	text := strings.Join(lines, "\n")
	for _, l := range lines {
		if n := len([]rune(l)); n > 80 {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
	if !strings.Contains(text, "! using nvidia-smi") || !strings.Contains(text, "\n  libnvidia-ml.so.1: cannot open shared object file: No such file or directory") {
		t.Errorf("notice not wrapped:\n%s", text)
	}
}

// A notice longer than three lines keeps its first three: the view has
// jobs to show below it.
func TestRenderNoticeAtMostThreeLines(t *testing.T) {
	smp := fixtureSample(t, 1)
	smp.Notices = []string{strings.Repeat("word ", 80)}
	var got []string
	for _, l := range Render(smp, ViewOptions{}) {
		if strings.Contains(l, "word") {
			got = append(got, l)
		}
	}
	if len(got) != 3 || !strings.HasPrefix(got[0], "! word") || !strings.HasPrefix(got[1], "  word") {
		t.Errorf("notice lines = %q, want three, the first after \"! \"", got)
	}
}
