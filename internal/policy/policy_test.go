package policy

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestEvaluate(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	gpu := Rule{Name: "gpu", Metric: GPUUsedFraction, Above: true, Threshold: 0.9, Action: Cleanup, Every: 30 * time.Second}
	held := Rule{Name: "held", Metric: CgroupUsageFraction, Above: true, Threshold: 0.8, For: 5 * time.Second, Action: Warn, Every: time.Minute}
	low := Rule{Name: "low", Metric: HostAvailableBytes, Threshold: 1 << 30, Action: Stop, Every: DefaultEvery(Stop)}
	type step struct {
		t    float64
		v    map[string]float64
		want []string // rule names fired
	}
	cases := []struct {
		name  string
		rules []Rule
		steps []step
	}{
		{"fires at once then rate-limited", []Rule{gpu}, []step{
			{0, map[string]float64{GPUUsedFraction: 0.5}, nil},
			{1, map[string]float64{GPUUsedFraction: 0.95}, []string{"gpu"}},
			{2, map[string]float64{GPUUsedFraction: 0.97}, nil},
			{30.9, map[string]float64{GPUUsedFraction: 0.97}, nil},
			{31, map[string]float64{GPUUsedFraction: 0.97}, []string{"gpu"}},
		}},
		{"exact threshold counts", []Rule{gpu}, []step{{0, map[string]float64{GPUUsedFraction: 0.9}, []string{"gpu"}}}},
		{"duration must hold", []Rule{held}, []step{
			{0, map[string]float64{CgroupUsageFraction: 0.85}, nil},
			{4, map[string]float64{CgroupUsageFraction: 0.85}, nil},
			{4.5, map[string]float64{CgroupUsageFraction: 0.5}, nil}, // dips: resets
			{5, map[string]float64{CgroupUsageFraction: 0.85}, nil},
			{9.9, map[string]float64{CgroupUsageFraction: 0.85}, nil},
			{10, map[string]float64{CgroupUsageFraction: 0.85}, []string{"held"}},
		}},
		{"missing metric never fires and resets", []Rule{held}, []step{
			{0, map[string]float64{CgroupUsageFraction: 0.9}, nil},
			{3, map[string]float64{}, nil},
			{6, map[string]float64{CgroupUsageFraction: 0.9}, nil},
		}},
		{"below, once only", []Rule{low, gpu}, []step{
			{0, map[string]float64{HostAvailableBytes: 512 << 20, GPUUsedFraction: 0.99}, []string{"low", "gpu"}},
			{3600, map[string]float64{HostAvailableBytes: 512 << 20}, nil},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var st State
			for _, s := range c.steps {
				prev := State{Since: append([]time.Time(nil), st.Since...), Last: append([]time.Time(nil), st.Last...)}
				next, got := Evaluate(c.rules, st, at(s.t), s.v)
				// The supervisor restores Last from the state it passed in.
				if !slices.Equal(st.Since, prev.Since) || !slices.Equal(st.Last, prev.Last) {
					t.Fatalf("t=%v: Evaluate modified the state passed in", s.t)
				}
				st = next
				var names []string
				for _, d := range got {
					names = append(names, d.Rule.Name)
					if c.rules[d.Index].Name != d.Rule.Name {
						t.Fatalf("decision index %d is not rule %s", d.Index, d.Rule.Name)
					}
				}
				if strings.Join(names, ",") != strings.Join(s.want, ",") {
					t.Fatalf("t=%v: fired %v, want %v", s.t, names, s.want)
				}
			}
		})
	}
}

func TestParse(t *testing.T) {
	yml := `rules:
  - name: gpu-cleanup
    metric: gpu.used_fraction
    above: 90%
    for: 5s
    action: cleanup
  - metric: host.available_bytes
    below: 2G
    action: signal
    signal: SIGUSR1
    every: 10s
`
	rules, err := Parse([]byte(yml), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 2 || rules[0].Threshold != 0.9 || rules[0].For != 5*time.Second || rules[0].Every != 30*time.Second {
		t.Fatalf("%+v", rules)
	}
	if rules[1].Above || rules[1].Threshold != 2<<30 || rules[1].Name != "host.available_bytes-signal" {
		t.Fatalf("%+v", rules[1])
	}
	tml := "[[rules]]\nmetric = \"cgroup.usage_fraction\"\nabove = \"85%\"\naction = \"snapshot\"\n"
	rules, err = Parse([]byte(tml), true)
	if err != nil || len(rules) != 1 || rules[0].Threshold != 0.85 || rules[0].Action != Snapshot {
		t.Fatalf("toml: %+v %v", rules, err)
	}
	for _, bad := range []string{
		"rules:\n  - metric: gpu.used\n    above: 1\n    action: warn\n",
		"rules:\n  - metric: gpu.used_fraction\n    above: 90%\n    action: explode\n",
		"rules:\n  - metric: gpu.used_fraction\n    above: 90%\n    below: 10%\n    action: warn\n",
		"rules:\n  - metric: gpu.used_fraction\n    abov: 90%\n    action: warn\n",
		"rules:\n  - metric: gpu.used_fraction\n    above: 90%\n    action: signal\n",
		"rules:\n  - metric: gpu.used_fraction\n    above: 90%\n    for: soon\n    action: warn\n",
	} {
		if _, err := Parse([]byte(bad), false); err == nil {
			t.Errorf("no error for %q", bad)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("rules:\n  - metric: gpu.used_fraction\n    above: 90%\n    action: warn\n"), false)
	f.Add([]byte("[[rules]]\nmetric = \"cgroup.usage_fraction\"\nabove = \"85%\"\naction = \"snapshot\"\n"), true)
	f.Fuzz(func(t *testing.T, b []byte, isTOML bool) { _, _ = Parse(b, isTOML) })
}

// Bad policies give one line naming what is wrong in the file's words
// (regression: a bad key gave yaml's multi-line text naming a Go type, an
// unknown signal was accepted and only failed when the rule fired, an
// empty file said "EOF").
func TestParseErrorsOneLine(t *testing.T) {
	for _, c := range []struct {
		text string
		toml bool
		want string
	}{
		{"rules:\n  - metric: gpu.used_fraction\n    above: 90%\n    action: warn\n    colour: red\n", false,
			`line 5: unknown key "colour" (name, metric`},
		{"rules:\n  - metric: host.available_bytes\n    below: 2G\n    action: signal\n    signal: SIGFOO\n", false,
			`rule 1: unknown signal "SIGFOO" (one of SIGHUP,`},
		{"rules:\n  - name: n1\n    metric: gpu.used\n    above: 1\n    action: warn\n", false, `rule 1 (n1): unknown metric "gpu.used"`},
		{"", false, "no rules"},
		{"rules: []\n", false, "no rules"},
		{"", true, "no rules"},
		{"[[rules]]\nmetric = \"gpu.used_fraction\"\nabove = \"90%\"\naction = \"warn\"\ncolor = 1\n", true, "unknown key rules.color"},
	} {
		_, err := Parse([]byte(c.text), c.toml)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line containing %q", c.text, err, c.want)
		}
	}
	rules, err := Parse([]byte("rules:\n  - metric: host.available_bytes\n    below: 2G\n    action: signal\n    signal: usr2\n"), false)
	if err != nil || NormalSignal(rules[0].Signal) != "SIGUSR2" {
		t.Errorf("usr2: %v %v", rules, err)
	}
}

// TestAfterKeepsStartUpQuiet: a rule with after: does not fire while the
// job is younger than that, even with its condition holding; it fires at
// once after. Without a known start, after is not applied.
func TestAfterKeepsStartUpQuiet(t *testing.T) {
	rules, err := Parse([]byte("rules:\n  - metric: cgroup.time_to_oom\n    below: 20s\n    after: 20s\n    action: stop\n"), false)
	if err != nil || rules[0].After != 20*time.Second {
		t.Fatalf("parse: %v %+v", err, rules)
	}
	t0 := time.Unix(1000, 0)
	st := State{Start: t0}
	vals := map[string]float64{CgroupTimeToOOM: 8}
	st, ds := Evaluate(rules, st, t0.Add(7*time.Second), vals)
	if len(ds) != 0 {
		t.Fatalf("fired 7 s into the run: %+v", ds)
	}
	if _, ds = Evaluate(rules, st, t0.Add(21*time.Second), vals); len(ds) != 1 {
		t.Fatalf("did not fire 21 s into the run")
	}
	if _, ds = Evaluate(rules, State{}, t0.Add(time.Second), vals); len(ds) != 1 {
		t.Fatalf("an unknown start must not hold the rule back")
	}
	if _, err := Parse([]byte("rules:\n  - metric: cgroup.time_to_oom\n    below: 20s\n    after: soon\n    action: stop\n"), false); err == nil || !strings.Contains(err.Error(), "after") {
		t.Errorf("after: soon accepted: %v", err)
	}
}
