package supervisor

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/hook"
	"github.com/torchmem/torchmem/internal/policy"
	"github.com/torchmem/torchmem/internal/store"
)

// Unit tests of the supervisor's decisions on a fake clock (Config.Now):
// no job is started and nothing sleeps; each runs in milliseconds.

// fakeClock is a Config.Now that moves only when told.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) set(d time.Duration)     { c.t = clockT0.Add(d) }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

var clockT0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// unreachablePID is above any pid_max (2^22 at most): a signal to its
// process group reaches nobody (ESRCH), so the stop action's SIGTERM and
// SIGKILL can run in a test.
const unreachablePID = 1 << 30

// newClockSup is a supervisor state on clock c with rules, recording
// events in rec and notices in notices, started at clockT0.
func newClockSup(c *fakeClock, rules ...policy.Rule) (*sup, *recorder, *strings.Builder) {
	c.t = clockT0
	rec, notices := &recorder{}, &strings.Builder{}
	cfg := Config{Now: c.now, Rules: rules, Rec: rec, Notices: notices, Grace: 10 * time.Second}
	s := &sup{cfg: cfg, hk: newHookState(), peaks: map[string]int64{}, began: c.now(), everPIDs: map[int]bool{},
		sm: &sampler{}, job: &job{pid: unreachablePID}}
	s.status = statusLine{w: notices, now: c.now}
	return s, rec, notices
}

// A warn rule with for 2s every 10s fires once the condition held 2 s on
// the clock, then at most every 10 s; a dip restarts the 2 s. Each event
// carries the clock's time.
func TestPolicyForAndEveryOnClock(t *testing.T) {
	c := &fakeClock{}
	rule := policy.Rule{Name: "usage", Metric: policy.CgroupUsageBytes, Above: true, Threshold: 1 << 30,
		For: 2 * time.Second, Action: policy.Warn, Every: 10 * time.Second}
	s, rec, notices := newClockSup(c, rule)
	high, low := map[string]float64{policy.CgroupUsageBytes: 2 << 30}, map[string]float64{policy.CgroupUsageBytes: 1 << 29}
	for _, step := range []struct {
		at     time.Duration
		values map[string]float64
		fires  bool
	}{
		{0, high, false},
		{time.Second, high, false},
		{2 * time.Second, high, true}, // held for 2 s
		{5 * time.Second, high, false},
		{11 * time.Second, high, false}, // 9 s after the last
		{12 * time.Second, high, true},
		{13 * time.Second, low, false}, // the dip resets "for"
		{14 * time.Second, high, false},
		{15 * time.Second, high, false},
		{16 * time.Second, high, false}, // held 2 s, but only 4 s after the last
		{22 * time.Second, high, true},
	} {
		c.set(step.at)
		before := len(rec.events)
		s.applyPolicy(c.now(), step.values)
		if fired := len(rec.events) > before; fired != step.fires {
			t.Fatalf("at %s: fired %v, want %v", step.at, fired, step.fires)
		}
		if !step.fires {
			continue
		}
		e := rec.events[len(rec.events)-1]
		var data struct {
			SampleNS int64 `json:"sample_ns"`
			AtNS     int64 `json:"at_ns"`
		}
		if err := json.Unmarshal(e.Data, &data); err != nil {
			t.Fatal(err)
		}
		if want := clockT0.Add(step.at); !e.Time.Equal(want) || data.SampleNS != want.UnixNano() || data.AtNS != want.UnixNano() || e.Kind != policy.Warn {
			t.Errorf("at %s: event %s at %s (sample_ns %d, at_ns %d)", step.at, e.Kind, e.Time, data.SampleNS, data.AtNS)
		}
	}
	if n := strings.Count(notices.String(), "torchmem: warning: usage: "+policy.CgroupUsageBytes); n != 3 {
		t.Errorf("%d warnings:\n%s", n, notices)
	}
}

// A cleanup with no hooked process to send it to is not done, and the
// rate limit is not spent: it is tried again at the next sample.
func TestUndoneActionKeepsRateLimit(t *testing.T) {
	c := &fakeClock{}
	rule := policy.Rule{Name: "gpu", Metric: policy.GPUUsedFraction, Above: true, Threshold: 0.9,
		Action: policy.Cleanup, Every: time.Minute}
	s, rec, _ := newClockSup(c, rule)
	srv, err := hook.Listen(t.TempDir(), hook.Options{Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	s.srv = srv
	for i := 0; i < 3; i++ {
		c.set(time.Duration(i) * time.Second)
		s.applyPolicy(c.now(), map[string]float64{policy.GPUUsedFraction: 0.95})
		if len(rec.events) != 0 || !s.pst.Last[0].IsZero() {
			t.Fatalf("at %ds: events %v, last fired %s", i, rec.events, s.pst.Last[0])
		}
	}
}

// The stop action SIGTERMs the job and SIGKILLs it when the grace period
// is over on the clock, not before.
func TestStopKillsAfterGraceOnClock(t *testing.T) {
	c := &fakeClock{}
	rule := policy.Rule{Name: "host", Metric: policy.HostAvailableBytes, Threshold: 1 << 30,
		Action: policy.Stop, Every: time.Hour}
	s, rec, notices := newClockSup(c, rule)
	c.set(5 * time.Second)
	s.applyPolicy(c.now(), map[string]float64{policy.HostAvailableBytes: 1 << 20})
	if want := clockT0.Add(15 * time.Second); !s.killAt.Equal(want) || len(rec.events) != 1 {
		t.Fatalf("kill at %s (want %s), events %v", s.killAt, want, rec.events)
	}
	c.set(15*time.Second - time.Millisecond)
	s.maybeKill(c.now())
	if strings.Contains(notices.String(), "grace period over") {
		t.Fatalf("killed before the grace period was over:\n%s", notices)
	}
	c.set(15 * time.Second)
	s.maybeKill(c.now())
	if !strings.Contains(notices.String(), "grace period over: killing the job") || !s.killAt.IsZero() {
		t.Errorf("not killed at the end of the grace period (kill at %s):\n%s", s.killAt, notices)
	}
}

// The status line's elapsed time is the clock's since the start, and it
// is redrawn at most every statusEvery however often samples come.
func TestStatusLineOnClock(t *testing.T) {
	c := &fakeClock{}
	s, _, _ := newClockSup(c)
	c.set(83*time.Second + 700*time.Millisecond)
	if parts := s.statusParts(); parts[len(parts)-1] != "1m23s" {
		t.Errorf("status parts %q, want elapsed 1m23s", parts)
	}
	var b strings.Builder
	l := statusLine{w: &b, on: true, now: c.now, size: func() (int, int, bool) { return 0, 0, false }}
	draws := 0
	for i := 0; i < 10; i++ { // a sample every 50 ms
		before := b.Len()
		l.draw("x")
		if b.Len() > before {
			draws++
		}
		c.advance(50 * time.Millisecond)
	}
	if draws != 3 { // at 0, 200 and 400 ms
		t.Errorf("%d redraws in 500 ms of samples, want 3", draws)
	}
}

// Growth is tracked from the samples over the run: the job's cgroup usage
// (else its RSS) at each optimizer step; a steady climb is a leak.
func TestGrowthFromSamples(t *testing.T) {
	const mib = 1 << 20
	c := &fakeClock{}
	s, _, _ := newClockSup(c)
	for i := int64(0); i < 30; i++ {
		c.advance(time.Second)
		usage, step := 200*mib+i*16*mib, i+1
		if i%3 == 0 {
			step = i // a sample between steps repeats one: not a point
		}
		s.trackGrowth(reading{s: store.Sample{Time: c.now(), Step: &step, CgroupUsage: &usage, RSSTotal: p64(1)}})
	}
	g := s.growth.leak()
	if g == nil || g.BytesPerStep < 15*mib || g.BytesPerStep > 17*mib {
		t.Fatalf("growth %+v, want about 16 MiB/step", g)
	}
	flat, _, _ := newClockSup(c)
	for i := int64(1); i <= 30; i++ {
		flat.trackGrowth(reading{s: store.Sample{Step: &i, RSSTotal: p64(500 * mib)}}) // no cgroup: RSS
	}
	if g := flat.growth.leak(); g != nil || len(flat.growth.pts) != 30 {
		t.Errorf("flat RSS: growth %+v over %d points", g, len(flat.growth.pts))
	}
}

func p64(v int64) *int64 { return &v }
