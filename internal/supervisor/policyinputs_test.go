package supervisor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/policy"
	"github.com/torchmem/torchmem/internal/procfs"
	"github.com/torchmem/torchmem/internal/store"
)

// A cgroup usage growing 40 MiB/s towards a 1 GiB limit gives
// cgroup.time_to_oom once the window has enough samples; a rule on it
// fires before the limit, the status line shows the projection, and the
// post-mortem keeps the projection the rule acted on, with the measured
// time from it to the end.
func TestTimeToOOMOnClock(t *testing.T) {
	const mib = 1 << 20
	c := &fakeClock{}
	rule := policy.Rule{Name: "ttl", Metric: policy.CgroupTimeToOOM, Threshold: 10, Action: policy.Warn, Every: time.Hour}
	s, rec, notices := newClockSup(c, rule)
	limit := int64(1024 * mib)
	var firedAt time.Duration
	for i := 0; i <= 22; i++ {
		c.set(time.Duration(i) * time.Second)
		usage := int64(200*mib + i*40*mib)
		r := reading{s: store.Sample{Time: c.now(), CgroupUsage: &usage}, metrics: map[string]float64{}, limit: &limit}
		s.addPolicyInputs(c.now(), &r)
		_, has := r.metrics[policy.CgroupTimeToOOM]
		if i < policy.TrendMinPoints-1 && has {
			t.Fatalf("at %ds: projected from %d samples", i, i+1)
		}
		s.last = r
		before := len(rec.events)
		s.applyPolicy(c.now(), r.metrics)
		if len(rec.events) > before && firedAt == 0 {
			firedAt = time.Duration(i) * time.Second
		}
	}
	// 1024 MiB is reached at 20.6 s; 10 s before that is 10.6 s: the first
	// sample at or under 10 s to go is at 11 s.
	if firedAt != 11*time.Second {
		t.Fatalf("rule fired at %s, want 11s\n%s", firedAt, notices)
	}
	if p := s.projectionText(); p != "OOM in ~0s at +40 MiB/s" {
		t.Errorf("status projection %q", p)
	}
	tto := s.timeToOOM(clockT0.Add(20600 * time.Millisecond))
	if tto == nil || tto.Rule != "ttl" || tto.Resource != "cgroup" || tto.Before < 9.5 || tto.Before > 9.7 || tto.Seconds < 9.5 || tto.Seconds > 9.7 {
		t.Errorf("post-mortem projection %+v, want 9.6 s projected and measured", tto)
	}
	c.set(5 * time.Second)
	s2, _, _ := newClockSup(c)
	usage := int64(300 * mib)
	for i := 0; i < 8; i++ {
		c.advance(time.Second)
		r := reading{s: store.Sample{Time: c.now(), CgroupUsage: &usage}, metrics: map[string]float64{}, limit: &limit}
		s2.addPolicyInputs(c.now(), &r)
		s2.last = r
	}
	if p := s2.projectionText(); p != "" || s2.timeToOOM(c.now()) != nil {
		t.Errorf("flat usage projected: %q", p)
	}
}

// The status line's field comes after the step and before the elapsed
// time.
func TestStatusShowsProjection(t *testing.T) {
	c := &fakeClock{}
	s, _, _ := newClockSup(c)
	s.in.cgProj = &projection{Projection: policy.Projection{Seconds: 185, BytesPerSecond: 40 << 20}, resource: "cgroup"}
	s.in.gpuProj = &projection{Projection: policy.Projection{Seconds: 7200, BytesPerSecond: 2 << 30}, resource: "gpu1"}
	parts := s.statusParts()
	if got := parts[len(parts)-2]; got != "OOM in ~3m at +40 MiB/s" {
		t.Errorf("parts %q", parts)
	}
	s.in.gpuProj.Seconds = 42
	if got := s.projectionText(); got != "gpu1 OOM in ~42s at +2.0 GiB/s" {
		t.Errorf("gpu projection %q", got)
	}
}

// PSI comes from the host's pressure file when the job's cgroup has none
// (v1); a host without it makes the PSI rules inert with one notice, and
// the run goes on.
func TestPSIRules(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "pressure"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "pressure", "memory"), []byte(
		"some avg10=23.50 avg60=5.00 avg300=1.00 total=123456\nfull avg10=4.25 avg60=1.00 avg300=0.20 total=2345\n"), 0o644)
	c := &fakeClock{}
	some := policy.Rule{Name: "some", Metric: policy.PSISomeAvg10, Above: true, Threshold: 20, Action: policy.Warn, Every: time.Minute}
	full := policy.Rule{Name: "full", Metric: policy.PSIFullAvg10, Above: true, Threshold: 5, Action: policy.Warn, Every: time.Minute}
	s, rec, notices := newClockSup(c, some, full)
	fs, err := procfs.NewFS(root)
	if err != nil {
		t.Fatal(err)
	}
	s.sm.fs = fs
	host, err := fs.MemoryPressure() // what the tick's sample reads
	if err != nil {
		t.Fatal(err)
	}
	r := reading{metrics: map[string]float64{}, psi: &host}
	s.addPolicyInputs(c.now(), &r)
	if r.metrics[policy.PSISomeAvg10] != 23.5 || r.metrics[policy.PSIFullAvg10] != 4.25 {
		t.Fatalf("metrics %v", r.metrics)
	}
	s.applyPolicy(c.now(), r.metrics)
	if len(rec.events) != 1 || !strings.Contains(rec.events[0].Message, "some: psi.memory.some_avg10 = 23.50% (threshold 20.00%)") {
		t.Errorf("events %+v\n%s", rec.events, notices)
	}

	none, _, notices := newClockSup(c, some)
	if none.sm.fs, err = procfs.NewFS(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	r = reading{metrics: map[string]float64{}}
	none.addPolicyInputs(c.now(), &r)
	none.addPolicyInputs(c.now(), &r)
	if len(r.metrics) != 0 || strings.Count(notices.String(), "policy rules on psi.memory.* are inert: no memory pressure (PSI) on this host") != 1 {
		t.Errorf("metrics %v, notices:\n%s", r.metrics, notices)
	}
}

// A time-to-OOM rule that can never fire says so once at the start.
func TestTimeToOOMInertNotices(t *testing.T) {
	c := &fakeClock{}
	s, _, notices := newClockSup(c,
		policy.Rule{Name: "cg", Metric: policy.CgroupTimeToOOM, Threshold: 30, Action: policy.Warn},
		policy.Rule{Name: "gpu", Metric: policy.GPUTimeToOOM, Threshold: 30, Action: policy.Warn})
	r := reading{metrics: map[string]float64{}}
	s.addPolicyInputs(c.now(), &r)
	s.addPolicyInputs(c.now(), &r)
	for _, want := range []string{"policy rule cg is inert: the job's cgroup has no memory limit", "policy rule gpu is inert: no GPU"} {
		if strings.Count(notices.String(), want) != 1 {
			t.Errorf("notices lack one %q:\n%s", want, notices)
		}
	}
}
