package supervisor

import (
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/hook"
	"github.com/torchmem/torchmem/internal/oomexplain"
)

const mib = 1 << 20

func TestDetectCopyOnRead(t *testing.T) {
	w := func(first, last, parFirst, parLast int64) oomexplain.WorkerGrowth {
		return oomexplain.WorkerGrowth{PID: 100, ParentPID: 1, FirstPrivate: first * mib, LastPrivate: last * mib,
			ParentFirstAnon: parFirst * mib, ParentLastAnon: parLast * mib, Seconds: 10}
	}
	for _, c := range []struct {
		name    string
		ws      []oomexplain.WorkerGrowth
		workers int // 0: not detected
	}{
		// A real run of testdata/copyonread.py with a shuffling sampler (600,000
		// items): the parent's own index list grew its RSS by 23 MiB.
		{"list of numpy arrays", []oomexplain.WorkerGrowth{w(4, 63, 351, 374), w(2, 63, 351, 374)}, 2},
		{"no workers", nil, 0},
		{"small growth: batches, not the dataset", []oomexplain.WorkerGrowth{w(7, 28, 120, 120), w(7, 28, 120, 120)}, 0},
		{"parent grew as much: a leak of the whole job", []oomexplain.WorkerGrowth{w(3, 100, 300, 400), w(3, 100, 300, 400)}, 0},
		{"parent grew a little (its batches)", []oomexplain.WorkerGrowth{w(3, 100, 300, 340), w(3, 100, 300, 340)}, 2},
		{"parent grew by more than half", []oomexplain.WorkerGrowth{w(3, 100, 300, 360), w(3, 100, 300, 360)}, 0},
		{"one of four: a big batch, not the pattern", []oomexplain.WorkerGrowth{w(3, 100, 300, 300), w(3, 5, 300, 300), w(3, 6, 300, 300), w(3, 4, 300, 300)}, 0},
		{"two of four (the last epoch's workers cut short)", []oomexplain.WorkerGrowth{w(3, 100, 300, 300), w(3, 90, 300, 300), w(3, 6, 300, 300), w(3, 4, 300, 300)}, 2},
		{"shrinking", []oomexplain.WorkerGrowth{w(100, 3, 300, 300)}, 0},
	} {
		got := detectCopyOnRead(c.ws)
		switch {
		case c.workers == 0 && got != nil:
			t.Errorf("%s: detected %+v", c.name, got)
		case c.workers != 0 && (got == nil || got.Workers != c.workers):
			t.Errorf("%s: got %+v, want %d workers", c.name, got, c.workers)
		}
	}
	got := detectCopyOnRead([]oomexplain.WorkerGrowth{w(3, 100, 300, 300), w(3, 90, 300, 310), w(3, 80, 300, 300)})
	if got.MedianGrowthBytes != 87*mib || got.TotalGrowthBytes != (97+87+77)*mib || got.ParentGrowthBytes != 10*mib ||
		got.PerWorker[0].Growth() != 97*mib || got.PerWorker[2].Growth() != 77*mib {
		t.Fatalf("figures %+v", got)
	}
}

// TestWorkerTrack: the first read of a process is kept with its parent's
// RSS at that tick, later reads move only the last one, ticks without a
// smaps_rollup read count for nothing, and only DataLoader workers (by
// their hello) become rows.
func TestWorkerTrack(t *testing.T) {
	var tr workerTrack
	t0 := time.Unix(1000, 0)
	tick := func(sec int, ms ...procMem) { tr.add(t0.Add(time.Duration(sec)*time.Second), ms) }
	tick(0, procMem{pid: 1, ppid: 0, anon: 300 * mib, dirty: 10 * mib})
	tick(1, procMem{pid: 1, ppid: 0, anon: 300 * mib, dirty: -1}, procMem{pid: 7, ppid: 1, anon: 5 * mib, dirty: 3 * mib},
		procMem{pid: 8, ppid: 1, anon: 5 * mib, dirty: 3 * mib})
	tick(2, procMem{pid: 1, ppid: 0, anon: 301 * mib, dirty: -1}, procMem{pid: 7, ppid: 1, anon: 50 * mib, dirty: -1})
	tick(6, procMem{pid: 1, ppid: 0, anon: 302 * mib, dirty: 20 * mib}, procMem{pid: 7, ppid: 1, anon: 70 * mib, dirty: 66 * mib},
		procMem{pid: 8, ppid: 1, anon: 70 * mib, dirty: 60 * mib})
	rows := tr.rows(map[int]*hook.Hello{7: {Worker: true}, 8: {Worker: true}, 1: {}})
	if len(rows) != 2 || rows[0].PID != 7 || rows[0].FirstPrivate != 3*mib || rows[0].LastPrivate != 66*mib ||
		rows[0].ParentFirstAnon != 300*mib || rows[0].ParentLastAnon != 302*mib || rows[0].Seconds != 5 {
		t.Fatalf("rows %+v", rows)
	}
	if c := tr.detect(map[int]*hook.Hello{7: {Worker: true}, 8: {Worker: true}}); c == nil || c.Workers != 2 {
		t.Fatalf("detect %+v", c)
	}
	if c := tr.detect(map[int]*hook.Hello{7: {}, 8: {}}); c != nil {
		t.Fatalf("not workers, detected %+v", c)
	}
}

// fastClock runs the run's clock (and so the PSS schedule: a whole read
// every 5 s of it) x times faster than the real one.
func fastClock(x int) func() time.Time {
	start := time.Now()
	var mu sync.Mutex
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return start.Add(time.Duration(x) * time.Since(start))
	}
}

// TestCopyOnReadRealDataLoader runs a real DataLoader (2 persistent
// workers, 2 epochs) over the same data twice: as a Python list of small
// numpy arrays (each read writes an object's reference count: the workers
// copy the pages) it must be detected, with an event and the advice in the
// post-mortem; as a numpy memmap (items are views of clean file pages) it
// must not.
func TestCopyOnReadRealDataLoader(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs two real PyTorch DataLoader jobs (~40 s); TestDetectCopyOnRead covers the decision")
	}
	py := "/usr/bin/python3"
	if exec.Command(py, "-c", "import torch, numpy").Run() != nil {
		t.Skip("no /usr/bin/python3 with torch and numpy")
	}
	for _, c := range []struct {
		mode string
		want bool
	}{{"list", true}, {"memmap", false}} {
		t.Run(c.mode, func(t *testing.T) {
			rec := &recorder{}
			o := runJob(t, Config{Argv: []string{py, "testdata/copyonread.py", c.mode, "1000000", "2", filepath.Join(t.TempDir(), "data.npy")},
				Hook: true, HookDir: t.TempDir(), Rec: rec, Now: fastClock(5)})
			s := o.res.Summary
			var buf strings.Builder
			s.Print(&buf, "test")
			t.Log(buf.String())
			if o.res.ExitCode != 0 || !strings.Contains(o.stdout, "done 2 True") {
				t.Fatalf("exit %d, stdout %q", o.res.ExitCode, o.stdout)
			}
			workers, events := 0, 0
			for _, e := range rec.events {
				workers += btoi(e.Kind == "hello" && strings.Contains(e.Message, "DataLoader worker"))
				events += btoi(e.Kind == "copy_on_read")
			}
			if workers != 2 {
				t.Fatalf("%d DataLoader workers said hello, want 2", workers)
			}
			if !c.want {
				if s.CopyOnRead != nil || events != 0 {
					t.Fatalf("memmap detected: %+v", s.CopyOnRead)
				}
				return
			}
			if s.CopyOnRead == nil || s.CopyOnRead.Workers != 2 || events != 1 || len(s.CopyOnRead.PerWorker) != 2 {
				t.Fatalf("copy on read %+v, %d events", s.CopyOnRead, events)
			}
			if !strings.Contains(buf.String(), "copied the dataset on read") || !strings.Contains(buf.String(), "memory-mapped files") {
				t.Fatalf("post-mortem lacks the advice")
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
