package tui

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/torchmem/torchmem/internal/gpu"
	"github.com/torchmem/torchmem/internal/i18n"
	"github.com/torchmem/torchmem/internal/identity"
	"github.com/torchmem/torchmem/internal/sample"
	"github.com/torchmem/torchmem/internal/sample/sampletest"
)

func i64(v int64) *int64 { return &v }

// fixtureTree is the captured DataLoader job (internal/sample/sampletest)
// with workers workers, a fake H200 and a fixed clock.
func fixtureTree(t testing.TB, workers int) (*sample.Sampler, sampletest.Tree) {
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
	return s, tree
}

func fixtureSampler(t testing.TB, workers int) *sample.Sampler {
	s, _ := fixtureTree(t, workers)
	return s
}

func fixtureSample(t testing.TB, workers int) *sample.Sample {
	smp, err := fixtureSampler(t, workers).Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return smp
}

// checkWidth fails for a line wider than w display columns.
func checkWidth(t *testing.T, lines []string, w int) {
	t.Helper()
	for _, l := range lines {
		if n := i18n.Width(l); n > w {
			t.Errorf("line of %d columns (max %d): %q", n, w, l)
		}
	}
}

func TestRenderFits80AndFolds(t *testing.T) {
	smp := fixtureSample(t, 32)
	lines := Render(smp, ViewOptions{})
	text := strings.Join(lines, "\n")
	checkWidth(t, lines, 80)
	if strings.Contains(text, "\x1b") {
		t.Errorf("escape sequence without color:\n%s", text)
	}
	for _, want := range []string{"JOB 2000  33 procs (32 workers)", " ▸2000", "+32", "32 workers folded (e)", "H200",
		"2000:4.0G", "host777:1.0G", "cgroup v1", "total", "sources: rss/swap status · pss/uss smaps_rollup · gpu fake", "sort PSS▼", "PSS▼"} {
		if !strings.Contains(text, want) {
			t.Errorf("view lacks %q:\n%s", want, text)
		}
	}
	expanded := Render(smp, ViewOptions{Expand: true})
	if len(expanded) != len(lines)+31 || !strings.Contains(strings.Join(expanded, "\n"), " ▾2000") {
		t.Errorf("expanded view has %d lines, folded %d:\n%s", len(expanded), len(lines), strings.Join(expanded, "\n"))
	}
}

// Folding shows for any number of workers, with a mark on the parent.
func TestFoldAnyNumberOfWorkers(t *testing.T) {
	for _, n := range []int{1, 2, 4} {
		smp := fixtureSample(t, n)
		folded := strings.Join(Render(smp, ViewOptions{}), "\n")
		expanded := strings.Join(Render(smp, ViewOptions{Expand: true}), "\n")
		what := strconv.Itoa(n) + " workers folded"
		if n == 1 {
			what = "1 worker folded"
		}
		if !strings.Contains(folded, "▸2000") || !strings.Contains(folded, what) || strings.Contains(folded, "(worker)") {
			t.Errorf("%d workers, folded:\n%s", n, folded)
		}
		if !strings.Contains(expanded, "▾2000") || strings.Count(expanded, "(worker)") != n || strings.Contains(expanded, "folded") {
			t.Errorf("%d workers, expanded:\n%s", n, expanded)
		}
	}
}

// The sources line is said once, however many jobs there are.
func TestSourcesOnce(t *testing.T) {
	smp := fixtureSample(t, 1)
	other := smp.Jobs[0]
	other.ID, other.RootPID = "pid:3000", 3000
	smp.Jobs = append(smp.Jobs, other)
	text := strings.Join(Render(smp, ViewOptions{}), "\n")
	if strings.Count(text, "sources:") != 1 || strings.Count(text, "JOB ") != 2 {
		t.Errorf("want one sources line for two jobs:\n%s", text)
	}
}

// A job's workload identity (internal/identity) is on its title line.
func TestRenderIdentity(t *testing.T) {
	smp := fixtureSample(t, 1)
	smp.Jobs[0].Identity = &identity.Identity{Kind: identity.KindSlurm, Slurm: &identity.Slurm{JobID: "4242", Step: "0", User: "alice", Source: "cgroup"}}
	for lang, want := range map[string]string{"en": "JOB 2000  2 procs (1 worker)  in slurm 4242.0 (alice)", "zh": "属于 slurm 4242.0 (alice)"} {
		tag := i18n.EN
		if lang == "zh" {
			tag = i18n.ZH
		}
		lines := Render(smp, ViewOptions{Lang: tag})
		checkWidth(t, lines, 80)
		if text := strings.Join(lines, "\n"); !strings.Contains(text, want) {
			t.Errorf("%s: no %q:\n%s", lang, want, text)
		}
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

// pidsOf lists the PIDs of the process rows, in order.
func pidsOf(lines []string) []string {
	var pids []string
	for _, l := range lines {
		f := strings.Fields(strings.NewReplacer("▾", "", "▸", "", ">", "").Replace(l))
		if len(f) > 1 && (f[1] == "worker" || f[1] == "main") {
			if _, err := strconv.Atoi(f[0]); err == nil {
				pids = append(pids, f[0])
			}
		}
	}
	return pids
}

func TestSortOrders(t *testing.T) {
	smp := fixtureSample(t, 4)
	if got := strings.Join(pidsOf(Render(smp, ViewOptions{Sort: "pid", Expand: true})), ","); got != "2000,2001,2002,2003,2004" {
		t.Errorf("pid order %v", got)
	}
	rev := Render(smp, ViewOptions{Sort: "pid", Expand: true, Reverse: true})
	if got := strings.Join(pidsOf(rev), ","); got != "2000,2004,2003,2002,2001" {
		t.Errorf("reversed pid order %v", got)
	}
	if !strings.Contains(strings.Join(rev, "\n"), "sort PID▼") {
		t.Errorf("reversed header:\n%s", strings.Join(rev, "\n"))
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
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	}
	return tea.KeyPressMsg{Code: rune(s[0]), Text: s}
}

type kill struct {
	pid int
	sig syscall.Signal
}

// testModel is the live view over the fixture job, its first sample
// taken, on a w×h terminal; kills are recorded, answered with err.
func testModel(t *testing.T, workers, w, h int, lang string, err error) (*model, *[]kill) {
	t.Helper()
	s, tree := fixtureTree(t, workers)
	var kills []kill
	tag := i18n.EN
	if lang == "zh" {
		tag = i18n.ZH
	}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	m, e := newModel(context.Background(), Config{Sampler: s, Interval: time.Second, ProcRoot: tree.ProcRoot,
		Root: t.TempDir(), Lang: tag, View: ViewOptions{Sort: "pss"}, Now: func() time.Time { return now },
		Kill: func(pid int, sig syscall.Signal) error { kills = append(kills, kill{pid, sig}); return err }})
	if e != nil {
		t.Fatal(e)
	}
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	m.Update(m.Init()())
	// A second sample a second later, the main process having used half
	// a core meanwhile: CPU% and a history of two points.
	bumpCPU(t, tree.ProcRoot, sampletest.MainPID, 50)
	now = now.Add(time.Second)
	m.Update(m.collect()())
	return m, &kills
}

// bumpCPU adds ticks to a fixture process's utime (field 14 of stat).
func bumpCPU(t *testing.T, procRoot string, pid, ticks int) {
	t.Helper()
	path := filepath.Join(procRoot, strconv.Itoa(pid), "stat")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	f := strings.Fields(s[i+2:]) // from field 3 (state)
	u, _ := strconv.Atoi(f[11])
	f[11] = strconv.Itoa(u + ticks)
	if err := os.WriteFile(path, []byte(s[:i+2]+strings.Join(f, " ")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func quits(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

func TestModelKeys(t *testing.T) {
	m, kills := testModel(t, 4, 120, 40, "en", nil)
	view := func() string { return m.View().Content }
	if !strings.Contains(view(), "JOB 2000") || !strings.Contains(view(), " 50.0 ") {
		t.Fatalf("first view (want the main process at 50.0 CPU%%):\n%s", view())
	}
	m.Update(key("s"))
	if m.view.Sort != "rss" || !strings.Contains(view(), "sort RSS▼") {
		t.Errorf("s: sort %q:\n%s", m.view.Sort, view())
	}
	m.Update(key("r"))
	if !strings.Contains(view(), "sort RSS▲") {
		t.Errorf("r does not reverse:\n%s", view())
	}
	// Help: ? opens, q closes it without quitting, esc closes it too.
	m.Update(key("?"))
	if !strings.Contains(view(), "keys (esc, ? or q closes this help)") || !strings.Contains(view(), "send a signal") {
		t.Errorf("? shows no help:\n%s", view())
	}
	if _, cmd := m.Update(key("q")); quits(cmd) || strings.Contains(view(), "keys (esc") {
		t.Error("q in the help quits or leaves it open")
	}
	m.Update(key("h"))
	m.Update(key("esc"))
	if strings.Contains(view(), "keys (esc") {
		t.Error("esc leaves the help open")
	}
	// Esc never quits.
	if _, cmd := m.Update(key("esc")); quits(cmd) {
		t.Error("esc quits")
	}
	// Filter.
	for _, k := range []string{"/", "x", "y", "backspace", "backspace", "z", "enter"} {
		m.Update(key(k))
	}
	if m.view.Filter != "z" || m.editing {
		t.Errorf("filter %q editing %v", m.view.Filter, m.editing)
	}
	m.Update(key("/"))
	m.Update(tea.KeyPressMsg{Code: 'u', Mod: tea.ModCtrl})
	m.Update(key("enter"))
	// Fold.
	if !strings.Contains(view(), "▸2000") {
		t.Errorf("not folded at first:\n%s", view())
	}
	m.Update(key("e"))
	if !m.view.Expand || !strings.Contains(view(), "▾2000") {
		t.Errorf("e does not list the workers:\n%s", view())
	}
	m.Update(key("p"))
	if !m.refresh {
		t.Error("p does not ask for PSS")
	}
	// Select and signal: j selects the first row, j again the next; x
	// asks, k makes it KILL, y sends.
	m.Update(key("x"))
	if !strings.Contains(view(), "no process selected") {
		t.Errorf("x without a selection:\n%s", view())
	}
	m.Update(key("j"))
	m.Update(key("j"))
	sel := m.sel
	if sel == 0 || sel == sampletest.MainPID || !strings.Contains(view(), ">  "+strconv.Itoa(sel)) {
		t.Fatalf("j j selected %d:\n%s", sel, view())
	}
	m.Update(key("x"))
	if !strings.Contains(view(), "send SIGTERM to pid "+strconv.Itoa(sel)+" (") {
		t.Errorf("x asks no question:\n%s", view())
	}
	m.Update(key("k"))
	m.Update(key("y"))
	if len(*kills) != 1 || (*kills)[0] != (kill{sel, syscall.SIGKILL}) || !strings.Contains(view(), "sent SIGKILL to pid") {
		t.Errorf("kills %v:\n%s", *kills, view())
	}
	m.Update(key("x"))
	m.Update(key("n"))
	if len(*kills) != 1 || !strings.Contains(view(), "nothing sent") {
		t.Errorf("n sent a signal: %v", *kills)
	}
	m.Update(key("esc"))
	if m.sel != 0 || m.f.status != "" {
		t.Error("esc keeps the selection or the status")
	}
	if _, cmd := m.Update(key("q")); !quits(cmd) {
		t.Error("q does not quit")
	}
	if _, cmd := m.Update(key("ctrl+c")); !quits(cmd) {
		t.Error("ctrl+c does not quit")
	}
}

// A refused signal says why, in words: EPERM means another user's process.
func TestSignalNotPermitted(t *testing.T) {
	m, _ := testModel(t, 2, 80, 24, "en", syscall.EPERM)
	for _, k := range []string{"j", "x", "y"} {
		m.Update(key(k))
	}
	if v := m.View().Content; !strings.Contains(v, "pid 2000: not permitted: run as root or the process's owner") {
		t.Errorf("EPERM:\n%s", v)
	}
	m2, _ := testModel(t, 2, 80, 24, "zh", syscall.ESRCH)
	for _, k := range []string{"j", "x", "y"} {
		m2.Update(key(k))
	}
	if v := m2.View().Content; !strings.Contains(v, "pid 2000：进程不存在（已退出）") {
		t.Errorf("ESRCH in zh:\n%s", v)
	}
}

// The view fills the terminal exactly, whatever its size: no line wider,
// no more lines than rows (the footer on the last).
func TestModelFitsTerminal(t *testing.T) {
	for _, sz := range [][2]int{{60, 5}, {80, 24}, {200, 50}, {40, 3}} {
		for _, lang := range []string{"en", "zh"} {
			m, _ := testModel(t, 32, sz[0], sz[1], lang, nil)
			for _, keys := range [][]string{nil, {"e"}, {"?"}, {"j", "x"}} {
				for _, k := range keys {
					m.Update(key(k))
				}
				lines := strings.Split(m.View().Content, "\n")
				if len(lines) != sz[1] {
					t.Errorf("%v %s %v: %d lines", sz, lang, keys, len(lines))
				}
				checkWidth(t, lines, sz[0])
				m.Update(key("esc"))
				m.Update(key("esc"))
			}
		}
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
	wide := strings.Join(Render(smp, ViewOptions{Width: 160}), "\n")
	if !strings.Contains(wide, "[..........]  used 276K of 100M") {
		t.Errorf("wide v2 view has no cgroup bar:\n%s", wide)
	}
}

// A long notice wraps at spaces instead of losing its end to the 80-column
// cut: the end says what to do about it.
func TestRenderWrapsNotices(t *testing.T) {
	smp := fixtureSample(t, 1)
	smp.Notices = []string{"using nvidia-smi (slower, whole MiB): NVML unavailable: dlopen: libnvidia-ml.so.1: cannot open shared object file: No such file or directory"}
	lines := Render(smp, ViewOptions{})
	text := strings.Join(lines, "\n")
	checkWidth(t, lines, 80)
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

func TestMessagesComplete(t *testing.T) {
	for _, m := range cat.Missing() {
		t.Error(m)
	}
}

func TestSparkline(t *testing.T) {
	for _, c := range []struct {
		in   []uint64
		want string
	}{
		{[]uint64{100}, "▁"},
		{[]uint64{0, 50, 100}, "▁▄█"},
		{[]uint64{1000, 1001, 1000}, "▁▁▁"}, // a wobble of a few pages draws flat
		{[]uint64{900, 950, 1000}, "▁▄█"},
	} {
		if got := sparkline(c.in); got != c.want {
			t.Errorf("sparkline(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCPUPercent(t *testing.T) {
	t0 := time.Unix(1000, 0)
	if p := cpuPercent(cpuMark{ticks: 100, start: 7, at: t0}, cpuMark{ticks: 300, start: 7, at: t0.Add(2 * time.Second)}); p == nil || *p != 100 {
		t.Errorf("200 ticks in 2 s: %v", p)
	}
	if p := cpuPercent(cpuMark{ticks: 100, start: 7, at: t0}, cpuMark{ticks: 300, start: 8, at: t0.Add(time.Second)}); p != nil {
		t.Error("a reused PID has a CPU%")
	}
	if p := cpuPercent(cpuMark{}, cpuMark{ticks: 3, start: 8, at: t0}); p != nil {
		t.Error("a first read has a CPU%")
	}
}

// The signal question keeps its keys on an 80-column line whatever the
// PID's length: the command line gets what is left.
func TestSignalQuestionFits(t *testing.T) {
	for _, lang := range []string{"en", "zh"} {
		m, _ := testModel(t, 1, 80, 24, lang, nil)
		m.ask = &signalAsk{pid: 4194303, cmd: "/usr/bin/python3 -m torch.distributed.run --nproc-per-node 8 train.py", sig: syscall.SIGKILL}
		q := m.question()
		if i18n.Width(q) > 80 || !strings.HasSuffix(q, "i INT") || !strings.Contains(q, "4194303") || !strings.Contains(q, "/usr/bin") {
			t.Errorf("%s: %q (%d columns)", lang, q, i18n.Width(q))
		}
	}
}

func TestShortenLeft(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"/a/b", 20, "/a/b"},
		{"/user.slice/user-1000.slice/session-4.scope", 20, "…ice/session-4.scope"},
		{"/训练/作业/任务组", 12, "…作业/任务组"}, // 12 columns: the next "/" would make 13
	} {
		got := shortenLeft(c.in, c.n)
		if got != c.want || i18n.Width(got) > max(c.n, 12) {
			t.Errorf("shortenLeft(%q, %d) = %q (%d columns), want %q", c.in, c.n, got, i18n.Width(got), c.want)
		}
	}
}
