package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/torchmem/torchmem/internal/units"
	"gopkg.in/yaml.v3"
)

// fileRule is a rule as written in a policy file:
//
//	rules:
//	  - name: gpu-cleanup
//	    metric: gpu.used_fraction
//	    above: 90%
//	    for: 5s
//	    action: cleanup
//	    every: 30s
type fileRule struct {
	Name   string `yaml:"name" toml:"name"`
	Metric string `yaml:"metric" toml:"metric"`
	Above  string `yaml:"above" toml:"above"`
	Below  string `yaml:"below" toml:"below"`
	For    string `yaml:"for" toml:"for"`
	Action string `yaml:"action" toml:"action"`
	Signal string `yaml:"signal" toml:"signal"`
	Every  string `yaml:"every" toml:"every"`
	After  string `yaml:"after" toml:"after"`
}

type file struct {
	Rules []fileRule `yaml:"rules" toml:"rules"`
}

// Load reads a YAML (.yaml/.yml) or TOML (.toml) policy file.
func Load(path string) ([]Rule, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read policy %s: %w", path, err)
	}
	rules, err := Parse(b, filepath.Ext(path) == ".toml")
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", path, err)
	}
	return rules, nil
}

// Parse decodes policy text, TOML when isTOML, else YAML; unknown keys are
// errors so a typo does not silently disable a rule.
func Parse(b []byte, isTOML bool) ([]Rule, error) {
	var f file
	if isTOML {
		md, err := toml.Decode(string(b), &f)
		if err != nil {
			return nil, err
		}
		if un := md.Undecoded(); len(un) > 0 {
			return nil, fmt.Errorf("unknown key %s", un[0])
		}
	} else {
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true)
		if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
			return nil, yamlError(err)
		}
	}
	if len(f.Rules) == 0 {
		return nil, errors.New("no rules (want a list under rules:)")
	}
	var out []Rule
	for i, fr := range f.Rules {
		r, err := fr.rule()
		if err != nil {
			label := fmt.Sprintf("rule %d", i+1)
			if fr.Name != "" {
				label += fmt.Sprintf(" (%s)", fr.Name)
			}
			return nil, fmt.Errorf("%s: %w", label, err)
		}
		out = append(out, r)
	}
	return out, nil
}

var yamlUnknownField = regexp.MustCompile(`field (\S+) not found in type \S+`)

// yamlError makes yaml.v3's errors one line in the file's words: its type
// errors are a multi-line list naming Go types ("field colour not found
// in type policy.fileRule").
func yamlError(err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	msgs := make([]string, len(te.Errors))
	for i, m := range te.Errors {
		msgs[i] = yamlUnknownField.ReplaceAllString(m,
			`unknown key "$1" (name, metric, above, below, for, action, signal, every, after)`)
	}
	return errors.New(strings.Join(msgs, "; "))
}

func (fr fileRule) rule() (Rule, error) {
	r := Rule{Name: fr.Name, Metric: fr.Metric, Action: fr.Action, Signal: fr.Signal}
	if !slices.Contains(Metrics, r.Metric) {
		return r, fmt.Errorf("unknown metric %q (one of %s)", r.Metric, strings.Join(Metrics, ", "))
	}
	if a, target, ok := strings.Cut(r.Action, ":"); ok {
		r.Action, r.Target = a, target
	}
	if !slices.Contains(Actions, r.Action) {
		return r, fmt.Errorf("unknown action %q (warn, cleanup, snapshot, signal, stop, exec:CMD, notify:URL)", fr.Action)
	}
	if err := checkTarget(r.Action, r.Target); err != nil {
		return r, err
	}
	if r.Action == Signal && r.Signal == "" {
		return r, fmt.Errorf("action signal needs signal: (e.g. SIGUSR1)")
	}
	if r.Signal != "" && !slices.Contains(Signals, NormalSignal(r.Signal)) {
		return r, fmt.Errorf("unknown signal %q (one of %s)", r.Signal, strings.Join(Signals, ", "))
	}
	thr := fr.Above
	r.Above = true
	if (fr.Above == "") == (fr.Below == "") {
		return r, fmt.Errorf("give exactly one of above: or below:")
	}
	if fr.Below != "" {
		thr, r.Above = fr.Below, false
	}
	var err error
	if r.Threshold, err = ParseThreshold(r.Metric, thr); err != nil {
		return r, err
	}
	if r.For, err = optDuration("for", fr.For, 0); err != nil {
		return r, err
	}
	if r.Every, err = optDuration("every", fr.Every, DefaultEvery(r.Action)); err != nil {
		return r, err
	}
	if r.After, err = optDuration("after", fr.After, 0); err != nil {
		return r, err
	}
	if r.Name == "" {
		r.Name = r.Metric + "-" + r.Action
	}
	return r, nil
}

// ParseThreshold reads "90%" or "0.9" for a *_fraction metric, "10" or
// "10%" for a PSI metric (the kernel's percent), "30s" or a number of
// seconds for a *.time_to_oom metric, and "60G" or a byte count for a
// *_bytes metric.
func ParseThreshold(metric, s string) (float64, error) {
	switch kindOf(metric) {
	case kindFraction:
		f, err := units.ParsePercent(s)
		if err != nil {
			return 0, fmt.Errorf("threshold %q: %w", s, err)
		}
		return f, nil
	case kindPercent:
		f, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
		if err != nil || f < 0 || f > 100 {
			return 0, fmt.Errorf("threshold %q: want a percentage of time, 0-100", s)
		}
		return f, nil
	case kindSeconds:
		if d, err := time.ParseDuration(s); err == nil && d >= 0 {
			return d.Seconds(), nil
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil && f >= 0 {
			return f, nil
		}
		return 0, fmt.Errorf("threshold %q: want a duration (30s, 2m)", s)
	}
	n, err := units.ParseBytes(s)
	if err != nil {
		if f, ferr := strconv.ParseFloat(s, 64); ferr == nil {
			return f, nil
		}
		return 0, fmt.Errorf("threshold %q: %w", s, err)
	}
	return float64(n), nil
}

// DefaultEvery is the rate limit of an action when none is given: cleanup
// at most every 30 s (empty_cache stalls the GPU), warnings, snapshots,
// exec and notify every 60 s, signals and stop once.
func DefaultEvery(action string) time.Duration {
	switch action {
	case Cleanup:
		return 30 * time.Second
	case Warn, Snapshot, Exec, Notify:
		return time.Minute
	}
	return 100 * 365 * 24 * time.Hour
}

func optDuration(key, s string, def time.Duration) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s: bad duration %q", key, s)
	}
	return d, nil
}

// Signals are the signal names the signal action can send (the
// supervisor maps each to its number).
var Signals = []string{"SIGHUP", "SIGINT", "SIGQUIT", "SIGKILL", "SIGUSR1", "SIGUSR2", "SIGTERM", "SIGSTOP", "SIGCONT"}

// NormalSignal spells a signal name the way Signals does: "usr1" and
// "SIGUSR1" are both "SIGUSR1".
func NormalSignal(s string) string {
	s = strings.ToUpper(strings.TrimSpace(s))
	if !strings.HasPrefix(s, "SIG") {
		s = "SIG" + s
	}
	return s
}
