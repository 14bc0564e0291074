package sample

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/gpu"
	"github.com/torchmem/torchmem/internal/jobs"
	"github.com/torchmem/torchmem/internal/sample/sampletest"
)

// fakeClock is an injected clock the test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time      { return c.t }
func (c *fakeClock) add(d time.Duration) { c.t = c.t.Add(d) }
func i64(v int64) *int64                 { return &v }
func newClock() *fakeClock               { return &fakeClock{t: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)} }

// fakeGPU is one H200 with the fixture job's main process holding 4 GiB.
func fakeGPU(mainPID int) *gpu.Fake {
	return gpu.NewFake(gpu.Info{DriverVersion: "580.159.04", CUDADriverVersion: "13.0"},
		[]gpu.Device{{Index: 0, UUID: "GPU-0", Name: "NVIDIA H200", TotalBytes: 150754820096, UsedBytes: 4800000000, FreeBytes: 145954820096, NUMANode: -1}},
		[]gpu.Process{{GPUIndex: 0, GPUUUID: "GPU-0", PID: mainPID, HostPID: mainPID, UsedBytes: i64(4 << 30)}})
}

func newSampler(t testing.TB, workers int, mod func(*Options)) (*Sampler, sampletest.Tree, *fakeClock) {
	t.Helper()
	tree, err := sampletest.WriteJobTree(t.TempDir(), workers)
	if err != nil {
		t.Fatal(err)
	}
	clk := newClock()
	o := Options{ProcRoot: tree.ProcRoot, SysRoot: tree.SysRoot, GPU: fakeGPU(sampletest.MainPID), Now: clk.now}
	if mod != nil {
		mod(&o)
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return s, tree, clk
}

func TestCollectFixtureJob(t *testing.T) {
	s, _, _ := newSampler(t, 4, nil)
	smp, err := s.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(smp.Jobs) != 1 {
		t.Fatalf("jobs = %d, want 1", len(smp.Jobs))
	}
	j := smp.Jobs[0]
	if j.RootPID != sampletest.MainPID || len(j.Processes) != 5 || j.Totals.Workers != 4 {
		t.Fatalf("job = root %d, %d processes, %d workers", j.RootPID, len(j.Processes), j.Totals.Workers)
	}
	// Figures straight from the captured files: main VmRSS 275996 kB, ...
	main := j.Processes[0]
	if main.Role != jobs.RoleMain || !main.Torch || main.GPUBytes == nil || *main.GPUBytes != 4<<30 {
		t.Errorf("main = %+v", main)
	}
	if main.PSSBytes == nil || main.PSSSource != "smaps_rollup" || *main.PSSAgeSeconds != 0 {
		t.Errorf("main PSS = %v %q", main.PSSBytes, main.PSSSource)
	}
	tot := j.Totals
	if !tot.PSSComplete || tot.PSSBytes > tot.RSSBytes || tot.USSBytes > tot.PSSBytes || tot.GPUBytes != 4<<30 {
		t.Errorf("totals = %+v", tot)
	}
	if j.Cgroup == nil || !j.Cgroup.Max.Unlimited || j.Cgroup.UsageBytes != 556535808 || j.CgroupHeadroomBytes != nil {
		t.Errorf("cgroup = %+v", j.Cgroup)
	}
	if smp.Host.PSI == nil || smp.Host.CgroupMode != "v1" || smp.Host.Meminfo.MemTotalBytes == nil {
		t.Errorf("host = %+v", smp.Host)
	}
	if len(smp.Notices) != 0 || smp.Tier.PSSRead != 5 {
		t.Errorf("notices %q, pss read %d", smp.Notices, smp.Tier.PSSRead)
	}
}

func setRSS(t *testing.T, procRoot string, pid int, kB string) {
	t.Helper()
	path := filepath.Join(procRoot, itoa(pid), "status")
	b, _ := os.ReadFile(path)
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "VmRSS:") {
			lines[i] = "VmRSS:\t" + kB + " kB"
		}
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestPSSTierIsAdaptive(t *testing.T) {
	s, tree, clk := newSampler(t, 4, func(o *Options) { o.PSSPeriod = 10 * time.Second })
	ctx := context.Background()
	if smp, _ := s.Collect(ctx); smp.Tier.PSSRead != 5 {
		t.Fatalf("first collect read %d PSS", smp.Tier.PSSRead)
	}
	clk.add(time.Second)
	smp, _ := s.Collect(ctx)
	if smp.Tier.PSSRead != 0 || *smp.Jobs[0].Processes[1].PSSAgeSeconds != 1 || smp.Jobs[0].Totals.PSSMaxAgeSeconds != 1 {
		t.Errorf("1 s later: read %d, age %v", smp.Tier.PSSRead, *smp.Jobs[0].Processes[1].PSSAgeSeconds)
	}
	// A worker's RSS grows by 20%: only it is re-read.
	setRSS(t, tree.ProcRoot, sampletest.MainPID+2, "201835")
	clk.add(time.Second)
	if smp, _ = s.Collect(ctx); smp.Tier.PSSRead != 1 {
		t.Errorf("after RSS move: read %d, want 1", smp.Tier.PSSRead)
	}
	clk.add(10 * time.Second)
	if smp, _ = s.Collect(ctx); smp.Tier.PSSRead != 5 {
		t.Errorf("after the period: read %d, want 5", smp.Tier.PSSRead)
	}
	s.RefreshPSS()
	if smp, _ = s.Collect(ctx); smp.Tier.PSSRead != 5 {
		t.Errorf("after RefreshPSS: read %d, want 5", smp.Tier.PSSRead)
	}
}

// PSSTogether (the run supervisor's schedule): every process at once every
// PSSPeriod, the first whole read PSSFirst after the first Collect, a tick
// a hair early still counting, and nothing early on an RSS move.
func TestPSSTierTogether(t *testing.T) {
	s, tree, clk := newSampler(t, 4, func(o *Options) {
		o.PSSTogether, o.PSSPeriod, o.PSSFirst = true, 5*time.Second, time.Second
	})
	ctx := context.Background()
	step := func(d time.Duration, want int, what string) *Sample {
		t.Helper()
		clk.add(d)
		smp, err := s.Collect(ctx)
		if err != nil || smp.Tier.PSSRead != want {
			t.Fatalf("%s: read %d PSS, want %d (%v)", what, smp.Tier.PSSRead, want, err)
		}
		return smp
	}
	step(0, 5, "first collect: every new process")
	smp := step(960*time.Millisecond, 5, "PSSFirst less 40 ms of jitter")
	if smp.Jobs[0].Totals.PSSMaxAgeSeconds != 0 || !smp.Jobs[0].Totals.PSSComplete {
		t.Errorf("whole read: totals %+v", smp.Jobs[0].Totals)
	}
	setRSS(t, tree.ProcRoot, sampletest.MainPID+2, "201835") // +20%
	step(time.Second, 0, "after an RSS move")
	step(3*time.Second, 0, "4 s after the whole read")
	step(time.Second, 5, "5 s after the whole read")
	s.RefreshPSS()
	step(time.Second, 5, "RefreshPSS")
}

func TestPSSTierOff(t *testing.T) {
	s, _, _ := newSampler(t, 2, func(o *Options) { o.PSSPeriod = -1 })
	smp, err := s.Collect(context.Background())
	if err != nil || smp.Tier.PSSRead != 0 || smp.Jobs[0].Totals.PSSComplete || smp.Jobs[0].Processes[0].PSSBytes != nil {
		t.Errorf("PSS off: %+v %v", smp.Tier, err)
	}
}

func TestRestrictedToPIDsAndCgroup(t *testing.T) {
	// PIDs: the listed processes are one job even without torch; a PID
	// that does not exist is skipped.
	s, _, _ := newSampler(t, 3, func(o *Options) {
		o.PIDs = func() []int { return []int{sampletest.MainPID + 1, sampletest.MainPID + 2, 99999} }
		o.GPU = nil
	})
	smp, err := s.Collect(context.Background())
	if err != nil || len(smp.Jobs) != 1 || len(smp.Jobs[0].Processes) != 2 {
		t.Fatalf("PIDs: %+v %v", smp, err)
	}
	if smp.GPU.Info.Backend != "none" || smp.Jobs[0].Totals.Sources["gpu"] != "" {
		t.Errorf("no GPU: %+v", smp.GPU.Info)
	}
	// CgroupPath: processes from cgroup.procs, the cgroup read for the job.
	s, _, _ = newSampler(t, 3, func(o *Options) { o.CgroupPath = sampletest.CgroupPath })
	smp, err = s.Collect(context.Background())
	if err != nil || len(smp.Jobs) != 1 || len(smp.Jobs[0].Processes) != 4 || smp.Jobs[0].Cgroup == nil {
		t.Fatalf("cgroup: %+v %v", smp.Jobs, err)
	}
	// A cgroup that does not exist: one clear error naming it.
	s, _, _ = newSampler(t, 1, func(o *Options) { o.CgroupPath = "/no/such/group" })
	_, err = s.Collect(context.Background())
	if err == nil || !strings.Contains(err.Error(), "cgroup /no/such/group: no such memory cgroup") || strings.Count(err.Error(), "cgroup.procs") > 0 {
		t.Errorf("missing cgroup: %v", err)
	}
}

func TestMissingSourcesAreNotices(t *testing.T) {
	s, tree, _ := newSampler(t, 1, func(o *Options) { o.GPUNotice = "no NVIDIA GPU: test" })
	_ = os.Remove(filepath.Join(tree.ProcRoot, "pressure", "memory"))
	_ = os.RemoveAll(filepath.Join(tree.SysRoot, "fs"))
	smp, err := s.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if smp.Host.PSI != nil || len(smp.Jobs) != 1 || smp.Jobs[0].Cgroup != nil {
		t.Errorf("degraded sample = %+v", smp)
	}
	joined := strings.Join(smp.Notices, "\n")
	for _, want := range []string{"no NVIDIA GPU", "PSI", "cgroup"} {
		if !strings.Contains(joined, want) {
			t.Errorf("notices %q lack %q", joined, want)
		}
	}
	smp, _ = s.Collect(context.Background())
	if len(smp.Notices) != 3 {
		t.Errorf("notices repeated: %q", smp.Notices)
	}
}

func TestGPUErrorIsRecorded(t *testing.T) {
	g := fakeGPU(sampletest.MainPID)
	g.Err = os.ErrDeadlineExceeded
	s, _, _ := newSampler(t, 1, func(o *Options) { o.GPU = g })
	smp, err := s.Collect(context.Background())
	if err != nil || smp.GPU.Error == "" || len(smp.Jobs) != 1 {
		t.Errorf("gpu error: %q %v", smp.GPU.Error, err)
	}
	b, _ := json.Marshal(smp.GPU)
	if !strings.Contains(string(b), `"devices":[]`) || !strings.Contains(string(b), `"processes":[]`) {
		t.Errorf("a GPU without devices must give [] in JSON, not null: %s", b)
	}
}

// A forked worker inherits its parent's torch flag: no maps scan for it.
func TestTorchInheritedByForkedWorkers(t *testing.T) {
	s, tree, _ := newSampler(t, 2, nil)
	for i := 1; i <= 2; i++ {
		if err := os.Remove(filepath.Join(tree.ProcRoot, itoa(sampletest.MainPID+i), "maps")); err != nil {
			t.Fatal(err)
		}
	}
	smp, err := s.Collect(context.Background())
	if err != nil || len(smp.Jobs) != 1 {
		t.Fatalf("%v %+v", err, smp)
	}
	for _, p := range smp.Jobs[0].Processes {
		if !p.Torch {
			t.Errorf("pid %d not torch", p.PID)
		}
	}
}

func TestPSSFromSmapsAndSerialWorkers(t *testing.T) {
	s, tree, _ := newSampler(t, 2, func(o *Options) { o.PSSFromSmaps = true; o.PSSWorkers = 1 })
	for i := 0; i <= 2; i++ {
		rollup := filepath.Join(tree.ProcRoot, itoa(sampletest.MainPID+i), "smaps_rollup")
		b, _ := os.ReadFile(rollup)
		// smaps of one mapping with the rollup's figures: the sum is the same.
		if err := os.WriteFile(filepath.Join(filepath.Dir(rollup), "smaps"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	smp, err := s.Collect(context.Background())
	if err != nil || smp.Jobs[0].Processes[0].PSSSource != "smaps" || smp.Tier.PSSRead != 3 {
		t.Fatalf("%v %+v", err, smp.Jobs[0].Processes[0])
	}
}

// On a v2 host the job's cgroup brings its limit, headroom, OOM events and
// pressure (files captured after a kernel OOM kill in a 100 MB group).
func TestCollectV2Cgroup(t *testing.T) {
	tree, err := sampletest.WriteJobTreeV2(t.TempDir(), 2)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{ProcRoot: tree.ProcRoot, SysRoot: tree.SysRoot, Now: newClock().now})
	if err != nil {
		t.Fatal(err)
	}
	smp, err := s.Collect(context.Background())
	if err != nil || len(smp.Jobs) != 1 {
		t.Fatalf("%v %+v", err, smp)
	}
	j := smp.Jobs[0]
	c := j.Cgroup
	if smp.Host.CgroupMode != "v2" || c == nil || c.Version != 2 || c.Max.Bytes != 104857600 || c.Pressure == nil {
		t.Fatalf("cgroup = %+v", c)
	}
	if j.CgroupHeadroomBytes == nil || *j.CgroupHeadroomBytes != 104857600-282624 || *c.Events.OOMKill != 1 {
		t.Errorf("headroom %v, oom_kill %v", j.CgroupHeadroomBytes, c.Events.OOMKill)
	}
}

// A Python process seen before its `import torch` is found once torch is
// loaded: "no libtorch in maps" is re-checked after RSS growth, not cached.
func TestTorchFoundAfterLateImport(t *testing.T) {
	s, tree, _ := newSampler(t, 0, func(o *Options) { o.GPU = gpu.NewNoop() })
	dir := filepath.Join(tree.ProcRoot, itoa(sampletest.MainPID))
	maps, err := os.ReadFile(filepath.Join(dir, "maps"))
	if err != nil {
		t.Fatal(err)
	}
	status, _ := os.ReadFile(filepath.Join(dir, "status"))
	setRSS := func(kb int) {
		re := regexp.MustCompile(`(?m)^VmRSS:\s+\d+ kB$`)
		b := re.ReplaceAll(status, []byte("VmRSS:\t"+itoa(kb)+" kB"))
		if err := os.WriteFile(filepath.Join(dir, "status"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Before the import: a small interpreter without libtorch.
	setRSS(20 << 10)
	os.WriteFile(filepath.Join(dir, "maps"), []byte("00400000-00401000 r-xp 00000000 08:01 1 /usr/bin/python3.11\n"), 0o644)
	if smp, err := s.Collect(context.Background()); err != nil || len(smp.Jobs) != 0 {
		t.Fatalf("before import: %v, %d jobs", err, len(smp.Jobs))
	}
	// After: libtorch mapped and RSS grown by hundreds of MB.
	setRSS(400 << 10)
	os.WriteFile(filepath.Join(dir, "maps"), maps, 0o644)
	smp, err := s.Collect(context.Background())
	if err != nil || len(smp.Jobs) != 1 || smp.Jobs[0].RootPID != sampletest.MainPID {
		t.Fatalf("after import: %v, jobs %+v", err, smp.Jobs)
	}
}

// Two jobs in one cgroup each get its state (read once per Collect), each
// in its own copy.
func TestJobsSharingACgroup(t *testing.T) {
	s, tree, _ := newSampler(t, 1, nil)
	path := filepath.Join(tree.ProcRoot, itoa(sampletest.MainPID+1), "status")
	st, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st = regexp.MustCompile(`(?m)^PPid:\t\d+$`).ReplaceAll(st, []byte("PPid:\t1"))
	if err := os.WriteFile(path, st, 0o644); err != nil {
		t.Fatal(err)
	}
	smp, err := s.Collect(context.Background())
	if err != nil || len(smp.Jobs) != 2 {
		t.Fatalf("%v, %d jobs, want 2", err, len(smp.Jobs))
	}
	a, b := smp.Jobs[0].Cgroup, smp.Jobs[1].Cgroup
	if a == nil || b == nil || a == b || a.Path != sampletest.CgroupPath || a.UsageBytes != b.UsageBytes {
		t.Errorf("cgroups = %+v, %+v", a, b)
	}
}

// NoCgroup: the run supervisor reads its job's cgroup itself, so the
// sample leaves it alone (it was read twice every tick).
func TestNoCgroupSkipsTheRead(t *testing.T) {
	tree, err := sampletest.WriteJobTreeV2(t.TempDir(), 2)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{ProcRoot: tree.ProcRoot, SysRoot: tree.SysRoot, Now: newClock().now, NoCgroup: true})
	if err != nil {
		t.Fatal(err)
	}
	smp, err := s.Collect(context.Background())
	if err != nil || len(smp.Jobs) != 1 {
		t.Fatalf("%v %+v", err, smp)
	}
	if j := smp.Jobs[0]; j.Cgroup != nil || j.CgroupHeadroomBytes != nil {
		t.Errorf("cgroup read despite NoCgroup: %+v", j.Cgroup)
	}
}
