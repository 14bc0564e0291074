package policy

import (
	"math"
	"math/rand"
	"strings"
	"testing"
	"time"
)

func TestProject(t *testing.T) {
	const mib = 1 << 20
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ramp := func(n int, every time.Duration, start, perSec float64, noise float64) []Point {
		r := rand.New(rand.NewSource(1))
		var pts []Point
		for i := 0; i < n; i++ {
			at := t0.Add(time.Duration(i) * every)
			pts = append(pts, Point{At: at, Bytes: start + perSec*at.Sub(t0).Seconds() + noise*(r.Float64()-0.5)})
		}
		return pts
	}
	last := func(pts []Point) time.Time { return pts[len(pts)-1].At }
	cases := []struct {
		name    string
		pts     []Point
		limit   float64
		ok      bool
		seconds float64 // want, within 5%
	}{
		{"steady 40 MiB/s", ramp(20, time.Second, 200*mib, 40*mib, 0), 1024 * mib, true, (1024 - 200 - 40*19) / 40.0},
		{"noisy 40 MiB/s", ramp(20, time.Second, 100*mib, 40*mib, 8*mib), 2048 * mib, true, (2048 - 100 - 40*19) / 40.0},
		{"fast ticks", ramp(100, 100*time.Millisecond, 0, 10*mib, 0), 100 * mib, true, (100 - 99) / 10.0},
		{"flat", ramp(20, time.Second, 500*mib, 0, mib), 1024 * mib, false, 0},
		{"shrinking", ramp(20, time.Second, 900*mib, -10*mib, 0), 1024 * mib, false, 0},
		{"too slow", ramp(20, time.Second, 100*mib, 10<<10, 0), 1024 * mib, false, 0},
		{"too few points", ramp(4, time.Second, 100*mib, 40*mib, 0), 1024 * mib, false, 0},
		{"too short a span", ramp(10, 100*time.Millisecond, 100*mib, 40*mib, 0), 1024 * mib, false, 0},
		{"no limit", ramp(20, time.Second, 100*mib, 40*mib, 0), 0, false, 0},
		{"sawtooth", sawtooth(t0), 1024 * mib, false, 0},
		{"over the limit", ramp(20, time.Second, 200*mib, 40*mib, 0), 900 * mib, true, 0},
	}
	for _, c := range cases {
		p, ok := Project(c.pts, c.limit, last(c.pts))
		if ok != c.ok {
			t.Errorf("%s: ok %v (%+v), want %v", c.name, ok, p, c.ok)
			continue
		}
		if ok && math.Abs(p.Seconds-c.seconds) > 0.05*c.seconds+0.01 {
			t.Errorf("%s: %.2fs (%+v), want %.2fs", c.name, p.Seconds, p, c.seconds)
		}
	}
}

// sawtooth climbs and drops every 3 s (a cache filled and emptied): no
// steady growth.
func sawtooth(t0 time.Time) []Point {
	var pts []Point
	for i := 0; i < 12; i++ {
		pts = append(pts, Point{At: t0.Add(time.Duration(i) * time.Second), Bytes: float64((i%3)*300) * (1 << 20)})
	}
	return pts
}

// Only the window before now counts: an old flat start does not slow the
// projected rate of a job that began growing since.
func TestProjectWindow(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var tr Trend
	for i := 0; i < 60; i++ {
		v := 100.0 * (1 << 20)
		if i >= 40 {
			v += float64(i-40) * 50 * (1 << 20)
		}
		tr.Add(t0.Add(time.Duration(i)*time.Second), v)
	}
	if len(tr.pts) != int(TrendWindow/time.Second)+1 {
		t.Errorf("trend kept %d points", len(tr.pts))
	}
	p, ok := tr.Project(4096*(1<<20), t0.Add(59*time.Second))
	if !ok || math.Abs(p.BytesPerSecond-50*(1<<20)) > 1 {
		t.Fatalf("projection %+v %v, want 50 MiB/s", p, ok)
	}
	// Later, with no new sample, the old samples fall out of the window.
	if _, ok := tr.Project(4096*(1<<20), t0.Add(70*time.Second)); ok {
		t.Errorf("projected from samples older than the window")
	}
	tr.Add(t0, 1) // the clock went back: start over
	if len(tr.pts) != 1 {
		t.Errorf("clock step back kept %d points", len(tr.pts))
	}
}

func TestParseNewMetricsAndActions(t *testing.T) {
	yml := `rules:
  - metric: cgroup.time_to_oom
    below: 30s
    action: exec:/usr/local/bin/page-me --loud
  - metric: psi.memory.some_avg10
    above: 20%
    action: notify:http://127.0.0.1:9000/hook
  - metric: gpu.time_to_oom
    below: 90
    action: notify:fifo:/run/torchmem.fifo
  - metric: psi.memory.full_avg10
    above: 5
    action: notify:unix:/run/alerts.sock
`
	rules, err := Parse([]byte(yml), false)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		action, target string
		threshold      float64
		every          time.Duration
	}{
		{Exec, "/usr/local/bin/page-me --loud", 30, time.Minute},
		{Notify, "http://127.0.0.1:9000/hook", 20, time.Minute},
		{Notify, "fifo:/run/torchmem.fifo", 90, time.Minute},
		{Notify, "unix:/run/alerts.sock", 5, time.Minute},
	}
	for i, w := range want {
		r := rules[i]
		if r.Action != w.action || r.Target != w.target || r.Threshold != w.threshold || r.Every != w.every {
			t.Errorf("rule %d: %+v, want %+v", i+1, r, w)
		}
	}
	if s := rules[0].String(); s != "cgroup.time_to_oom-exec cgroup.time_to_oom <= 30.0s -> exec:/usr/local/bin/page-me --loud" {
		t.Errorf("String %q", s)
	}
	if s := (Decision{Rule: rules[1], Value: 31.5}).Reason(); !strings.Contains(s, "= 31.50% (threshold 20.00%)") {
		t.Errorf("Reason %q", s)
	}
	for _, bad := range []struct{ action, want string }{
		{"exec:", "needs a command"},
		{"exec", "needs a command"},
		{"notify:http://example.com/x", "only loopback"},
		{"notify:http://10.0.0.1:80/", "only loopback"},
		{"notify:https://127.0.0.1/", "want http://"},
		{"notify:fifo:", "want http://"},
		{"notify", "want http://"},
		{"warn:loud", "takes no target"},
		{"shout:x", "unknown action"},
	} {
		text := "rules:\n  - metric: cgroup.time_to_oom\n    below: 30s\n    action: \"" + bad.action + "\"\n"
		if _, err := Parse([]byte(text), false); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: error %v, want %q", bad.action, err, bad.want)
		}
	}
	for metric, bad := range map[string]string{PSISomeAvg10: "120", CgroupTimeToOOM: "soon", GPUTimeToOOM: "-5s"} {
		if _, err := ParseThreshold(metric, bad); err == nil {
			t.Errorf("%s %q: no error", metric, bad)
		}
	}
}
