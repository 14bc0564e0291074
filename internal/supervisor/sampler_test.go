package supervisor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/hook"
	"github.com/torchmem/torchmem/internal/i18n"
	"github.com/torchmem/torchmem/internal/jobs"
	"github.com/torchmem/torchmem/internal/policy"
	"github.com/torchmem/torchmem/internal/sample"
	"github.com/torchmem/torchmem/internal/sample/sampletest"
	"github.com/torchmem/torchmem/internal/store"
)

// A PSS total is stored only when every figure in it was read in the same
// tick: a run whose worker was read fresh while the main process's figure
// was seconds old stored a PSS far below its cgroup usage.
func TestJobPSSOnlyFromOneTick(t *testing.T) {
	mk := func(read int, complete bool, age float64) *sample.Sample {
		j := sample.Job{Job: jobs.Job{Totals: jobs.Totals{RSSBytes: 300, PSSBytes: 100,
			PSSComplete: complete, PSSMaxAgeSeconds: age}}}
		return &sample.Sample{Jobs: []sample.Job{j}, Tier: sample.Tier{PSSRead: read}}
	}
	for _, c := range []struct {
		name     string
		smp      *sample.Sample
		wantPSS  bool
		wantLast bool
	}{
		{"all read this tick", mk(3, true, 0), true, true},
		{"one figure 2 s old", mk(1, true, 2), false, false},
		{"a process without a figure", mk(2, false, 0), false, false},
		{"nothing read this tick", mk(0, true, 0), false, false},
	} {
		sm := &sampler{}
		r := reading{metrics: map[string]float64{}, gpuProc: map[int]int64{}}
		sm.job(&r, c.smp)
		if got := r.s.PSSTotal != nil; got != c.wantPSS {
			t.Errorf("%s: PSS stored = %v, want %v", c.name, got, c.wantPSS)
		}
		if got := sm.lastPSS != nil; got != c.wantLast {
			t.Errorf("%s: status-line PSS kept = %v, want %v", c.name, got, c.wantLast)
		}
		if r.s.RSSTotal == nil || *r.s.RSSTotal != 300 {
			t.Errorf("%s: RSS total %v, want 300 every tick", c.name, r.s.RSSTotal)
		}
	}
}

// Every signal a policy file may name is one the supervisor can send.
func TestPolicySignalsKnown(t *testing.T) {
	for _, n := range policy.Signals {
		if _, ok := parseSignal(n); !ok {
			t.Errorf("policy accepts %s but the supervisor cannot send it", n)
		}
	}
	if len(policy.Signals) != len(signalNames) {
		t.Errorf("policy lists %d signals, the supervisor %d", len(policy.Signals), len(signalNames))
	}
}

// The PSS peak says it is sparse: on a short run it can be far below RSS.
func TestPeaksTextNotesSparsePSS(t *testing.T) {
	got := peaksText(map[string]int64{"pss_total": 8 << 20, "rss_total": 565 << 20}, tr(i18n.EN))
	if got != "pss_total 8.00 MiB (read every 5s), rss_total 565.00 MiB" {
		t.Errorf("peaks: %q", got)
	}
}

// Snapshots the hook dumps (at a CUDA OOM, or by the snapshot action) go to
// Config.SnapshotDir and outlive the run; they used to go into the hook
// dir and were deleted with it. Without a snapshot, no directory is made.
func TestSnapshotsOutliveTheRun(t *testing.T) {
	for _, dump := range []bool{true, false} {
		hookDir, snaps := t.TempDir(), filepath.Join(t.TempDir(), "snapshots", "run1")
		script := "true"
		if dump {
			// As the hook's _dump does: the directory is made by the first
			// snapshot written, never in advance.
			script = `mkdir -p "$TORCHMEM_SNAPSHOT_DIR" && echo pickle > "$TORCHMEM_SNAPSHOT_DIR/oom-1-1.pickle"`
		}
		o := runJob(t, Config{Argv: []string{"/bin/sh", "-c", script}, Hook: true, HookDir: hookDir, SnapshotDir: snaps})
		if o.res.ExitCode != 0 {
			t.Fatalf("exit %d: %s", o.res.ExitCode, o.notice)
		}
		_, err := os.Stat(filepath.Join(snaps, "oom-1-1.pickle"))
		if dump && err != nil {
			t.Errorf("the dumped snapshot is gone: %v", err)
		}
		if _, err := os.Stat(snaps); !dump && !os.IsNotExist(err) {
			t.Errorf("empty snapshot dir left behind: %v", err)
		}
		if _, err := os.Stat(hookDir); !os.IsNotExist(err) {
			t.Errorf("hook dir left behind: %v", err)
		}
	}
}

// The summary names the snapshot dumped at a CUDA OOM and how to read it.
func TestSummaryNamesOOMSnapshot(t *testing.T) {
	var b strings.Builder
	s := Summary{Cause: CauseCUDAOOM, Verdict: "CUDA out of memory", CUDAOOM: &hook.OOM{Snapshot: "/s/oom-1-2.pickle"}}
	s.Print(&b, "r1")
	if !strings.Contains(b.String(), "memory snapshot at the OOM: /s/oom-1-2.pickle (torchmem snapshot summary FILE)") {
		t.Errorf("summary: %s", b.String())
	}
}

// Allocator retries and OOM counts are summed over hooked processes (not
// workers: they send no stats) so serve can export and alert on them.
func TestAllocTotalsCountRetries(t *testing.T) {
	h := newHookState()
	h.last[10] = &hook.Stats{Devices: []hook.DeviceStats{{Device: 0, Allocated: 5, Reserved: 8, NumAllocRetries: 3, NumOOMs: 1}}}
	h.last[11] = &hook.Stats{Devices: []hook.DeviceStats{{Device: 0, Allocated: 1, Reserved: 2, NumAllocRetries: 4}}}
	got := h.totals(func(int) int64 { return 0 })
	if got.retries != 7 || got.ooms != 1 || got.allocated != 6 || got.reserved != 10 {
		t.Fatalf("totals %+v", got)
	}
}

// Every peak the supervisor writes is a declared store.PeakKey: the
// readers (runs, show, serve, /metrics) look them up by those names.
func TestPeakKeysDeclared(t *testing.T) {
	n := int64(1)
	r := reading{s: store.Sample{CgroupUsage: &n, PSSTotal: &n, RSSTotal: &n, SwapTotal: &n,
		AllocAllocated: &n, AllocReserved: &n, GPUUsed: []*int64{nil, &n}, GPUJobUsed: []*int64{&n, &n}},
		gpuProc: map[int]int64{4127: 1}}
	p := store.Peaks{}
	r.peaks(p)
	allocTotals{n: 1, peakAlloc: 1, peakRes: 1}.peaks(p)
	if len(p) != 12 {
		t.Errorf("%d peaks written, want 12: %v", len(p), p)
	}
	for k := range p {
		if !store.KnownPeakKey(k) {
			t.Errorf("peak %q is written but not declared in store (PeakKey)", k)
		}
	}
	for k := range sparsePeaks {
		if !store.KnownPeakKey(k) {
			t.Errorf("sparsePeaks names %q, not a peak", k)
		}
	}
}

// The supervisor's PSS schedule (sample's PSSTogether) on its own clock:
// every process at its first tick, the whole job pssFirst later (a tick a
// hair early counts), then every pssEvery and not between, so a stored PSS
// total always sums figures of one tick.
func TestPSSEveryFewSeconds(t *testing.T) {
	tree, err := sampletest.WriteJobTree(t.TempDir(), 2)
	if err != nil {
		t.Fatal(err)
	}
	sm, err := newSampler(tree.ProcRoot, tree.SysRoot, nil, nil, sampletest.MainPID)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		after   time.Duration
		wantPSS bool
	}{
		{0, true}, {pssFirst - 40*time.Millisecond, true}, {time.Second, false},
		{pssEvery - time.Second, true}, {pssEvery / 2, false}, {pssEvery / 2, true},
	} {
		now = now.Add(c.after)
		r := sm.collect(now, allocTotals{step: -1})
		if got := r.s.PSSTotal != nil; got != c.wantPSS || len(r.pids) != 3 {
			t.Errorf("%v later: PSS stored %v, want %v (pids %v)", c.after, got, c.wantPSS, r.pids)
		}
	}
}
