package supervisor

import (
	"testing"

	"github.com/torchmem/torchmem/internal/jobs"
	"github.com/torchmem/torchmem/internal/sample"
)

func u64(v uint64) *uint64 { return &v }

// The live view gets this tick's job, copied: the sampler changing its
// figures afterwards (its cached PSS reads, a later tick) does not reach
// the view's copy, and a job of more than liveProcs processes is cut to
// liveProcs rows with the whole job's totals.
func TestLiveJobsCopied(t *testing.T) {
	j := sample.Job{Key: "pid:100@1", Job: jobs.Job{ID: "pid:100", RootPID: 100, Command: "python3 train.py",
		Totals: jobs.Totals{Processes: liveProcs + 10, RSSBytes: 9 << 30, Sources: map[string]string{"rss": "status"}}}}
	for i := 0; i < liveProcs+10; i++ {
		j.Processes = append(j.Processes, jobs.Process{PID: 100 + i, Cmdline: []string{"python3", "train.py"},
			RSSBytes: u64(1 << 20), PSSBytes: u64(1 << 19)})
	}
	s := &sup{cfg: Config{Rec: nopRecorder{}}, sm: &sampler{}}
	s.last = reading{jobs: []sample.Job{j}, hostTotal: 64 << 30}
	l := s.live()
	if len(l.Jobs) != 1 || len(l.Jobs[0].Processes) != liveProcs || l.Jobs[0].Totals.Processes != liveProcs+10 || l.HostTotal != 64<<30 {
		t.Fatalf("live jobs %d, rows %d, totals %+v, host %d", len(l.Jobs), len(l.Jobs[0].Processes), l.Jobs[0].Totals, l.HostTotal)
	}
	*j.Processes[0].RSSBytes, *j.Processes[0].PSSBytes = 1, 2
	j.Processes[0].Cmdline[0] = "changed"
	j.Totals.Sources["rss"] = "changed"
	p := l.Jobs[0].Processes[0]
	if *p.RSSBytes != 1<<20 || *p.PSSBytes != 1<<19 || p.Cmdline[0] != "python3" || l.Jobs[0].Totals.Sources["rss"] != "status" {
		t.Fatalf("the copy shares the sampler's figures: %+v %v", p, l.Jobs[0].Totals.Sources)
	}
	if got := (&sup{cfg: Config{Rec: nopRecorder{}}, sm: &sampler{}}).live().Jobs; got != nil {
		t.Fatalf("no sample yet, jobs %v", got)
	}
}

// BenchmarkLiveJobs is what run --tui adds to a tick: copying a
// DataLoader job of a main process and 8 workers for the view.
func BenchmarkLiveJobs(b *testing.B) {
	j := sample.Job{Job: jobs.Job{ID: "pid:100", RootPID: 100, Totals: jobs.Totals{Sources: map[string]string{"rss": "status", "pss": "smaps_rollup"}}}}
	for i := 0; i < 9; i++ {
		age := 1.5
		j.Processes = append(j.Processes, jobs.Process{PID: 100 + i, Cmdline: []string{"python3", "train.py", "--epochs", "3"},
			RSSBytes: u64(1 << 30), RSSAnonBytes: u64(1 << 29), SwapBytes: u64(0), PSSBytes: u64(1 << 29), USSBytes: u64(1 << 28), PSSAgeSeconds: &age})
	}
	js := []sample.Job{j}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if len(liveJobs(js)) != 1 {
			b.Fatal("no job")
		}
	}
}
