package supervisor

import (
	"strings"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/hook"
	"github.com/torchmem/torchmem/internal/policy"
)

// TestFirstCrossing: a usage threshold crossed again and again within a
// minute is recorded once; after the quiet time, again; each threshold
// on its own.
func TestFirstCrossing(t *testing.T) {
	s := &sup{}
	t0 := time.Unix(1000, 0)
	got := []bool{
		s.firstCrossing(500<<20, t0),
		s.firstCrossing(500<<20, t0.Add(200*time.Millisecond)),
		s.firstCrossing(500<<20, t0.Add(900*time.Millisecond)),
		s.firstCrossing(540<<20, t0.Add(time.Second)),
		s.firstCrossing(500<<20, t0.Add(crossingQuiet+time.Second)),
	}
	want := []bool{true, false, false, true, true}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("crossing %d: recorded %v, want %v", i, got[i], want[i])
		}
	}
}

// TestSnapshotRefusedOnCPUJob: a snapshot rule on a job whose hooked
// processes report no CUDA device says at once that there is nothing to
// snapshot, instead of "snapshot requested" and a failure later.
func TestSnapshotRefusedOnCPUJob(t *testing.T) {
	c := &fakeClock{}
	rule := policy.Rule{Name: "snap", Metric: policy.HostAvailableBytes, Threshold: 1 << 30,
		Action: policy.Snapshot, Every: time.Hour}
	s, rec, notices := newClockSup(c, rule)
	srv, err := hook.Listen(t.TempDir(), hook.Options{Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	s.srv = srv
	s.hk.last[7] = &hook.Stats{}
	c.set(time.Second)
	s.applyPolicy(c.now(), map[string]float64{policy.HostAvailableBytes: 1 << 20})
	if len(rec.events) != 1 || !strings.Contains(rec.events[0].Message, "no process of the job uses CUDA") {
		t.Fatalf("events %+v", rec.events)
	}
	if got := notices.String(); strings.Contains(got, "requested") || !strings.Contains(got, "no snapshot") {
		t.Errorf("notices %q", got)
	}
}
