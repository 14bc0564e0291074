// Package doctor audits a host for memory trouble of PyTorch jobs. Each
// check is a small function over a Host (injected roots, GPU backend,
// Python probe) returning findings: a stable id, a severity, the evidence
// read from the host (value and the file it came from), why it matters for
// PyTorch and the exact fix. Checks only read; `torchmem tune` changes.
//
// API:
//
//	h := &doctor.Host{ProcRoot: "/proc", SysRoot: "/sys", Root: "/", GPU: b, GPUNotice: n,
//		Run: gpu.ExecRunner, Python: "python3", Getenv: os.Getenv, UID: os.Getuid()}
//	rep := doctor.Run(h, doctor.Checks())  // Report{Host, Findings, Worst, Counts}
//	rep.ExitCode()                          // 0 ok/info, 1 warn, 2 fail
//	doctor.WriteText(w, rep, verbose)       // the human report
package doctor

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Severity orders findings: OK < Info < Warn < Fail.
type Severity int

// Severities, in increasing order of trouble.
const (
	OK Severity = iota
	Info
	Warn
	Fail
)

var sevNames = [...]string{"ok", "info", "warn", "fail"}

func (s Severity) String() string { return sevNames[s] }

// MarshalText spells the severity for JSON.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads "ok", "info", "warn" or "fail".
func (s *Severity) UnmarshalText(b []byte) error {
	for i, n := range sevNames {
		if n == string(b) {
			*s = Severity(i)
			return nil
		}
	}
	return fmt.Errorf("unknown severity %q", b)
}

// Evidence is one value read from the host and where it came from.
type Evidence struct {
	Source string `json:"source"` // "/proc/sys/vm/swappiness", "nvml", "python3 -c …"
	Value  string `json:"value"`
	// source, value: the catalog messages of a Source or Value that is
	// prose ("absent", "advised swap"), not data read from the host.
	source, value msg
}

// Finding is the result of one check (or one GPU of a per-GPU check).
type Finding struct {
	ID       string     `json:"id"`       // stable: "vm.swappiness", "gpu.persistence_mode"
	Category string     `json:"category"` // kernel, limits, cgroup, numa, gpu, pytorch
	Severity Severity   `json:"severity"`
	Title    string     `json:"title"` // one line: what was found
	Evidence []Evidence `json:"evidence,omitempty"`
	Why      string     `json:"why,omitempty"` // why it matters for PyTorch
	Fix      string     `json:"fix,omitempty"` // the exact fix
	// Tune names the `torchmem tune` setting that fixes it, if any.
	Tune string `json:"tune,omitempty"`
	// text: the catalog messages of Title, Why and Fix (messages.go).
	text findingText
}

// newFinding starts a finding titled by message title (its arguments
// args); an empty title is set later (titled).
func newFinding(id, cat string, sev Severity, title string, args ...any) Finding {
	f := Finding{ID: id, Category: cat, Severity: sev}
	if title != "" {
		f = f.titled(title, args...)
	}
	return f
}

// ev adds evidence and returns the finding, for chaining.
func (f Finding) ev(source, value string) Finding {
	f.Evidence = append(f.Evidence, Evidence{Source: source, Value: value})
	return f
}

func (f Finding) tune(s string) Finding { f.Tune = s; return f }

// Check is one unit of the audit.
type Check struct {
	ID  string
	Run func(h *Host) []Finding
}

// Report is the whole audit.
type Report struct {
	Host     HostFacts      `json:"host"`
	Findings []Finding      `json:"findings"`
	Worst    Severity       `json:"worst"`
	Counts   map[string]int `json:"counts"`
}

// Run runs every check against h. Findings keep the order of checks.
func Run(h *Host, checks []Check) Report {
	rep := Report{Host: h.facts(), Counts: map[string]int{}}
	for _, c := range checks {
		for _, f := range c.Run(h) {
			rep.Findings = append(rep.Findings, f)
			rep.Counts[f.Severity.String()]++
			if f.Severity > rep.Worst {
				rep.Worst = f.Severity
			}
		}
	}
	return rep
}

// ExitCode maps the worst severity to the process exit status: 0 for
// ok/info, 1 for warn, 2 for fail.
func (r Report) ExitCode() int {
	switch r.Worst {
	case Fail:
		return 2
	case Warn:
		return 1
	}
	return 0
}

// Categories are the groups of checks, in report order.
var Categories = []string{"kernel", "limits", "cgroup", "numa", "gpu", "pytorch"}

// CheckOnly returns an error naming the first entry of only that is neither
// a category, a check id, a finding id (thp.enabled) nor an id prefix (vm):
// `doctor --only thpp` must not print an empty, passing report.
func CheckOnly(checks []Check, only []string) error {
	for _, o := range only {
		if slices.Contains(Categories, o) {
			continue
		}
		known := false
		for _, c := range checks {
			known = known || o == c.ID || strings.HasPrefix(o, c.ID+".") || strings.HasPrefix(c.ID, o+".")
		}
		if !known {
			return fmt.Errorf("--only %q: not a check id (doctor --list) or a category (%s)", o, strings.Join(Categories, ", "))
		}
	}
	return nil
}

// selected: a finding is chosen by its id, its category, or a dotted prefix
// of its id (check "thp" makes thp.enabled and thp.defrag; "vm" picks every
// vm.* setting).
func selected(f Finding, only []string) bool {
	if len(only) == 0 || slices.Contains(only, f.ID) || slices.Contains(only, f.Category) {
		return true
	}
	for _, o := range only {
		if strings.HasPrefix(f.ID, o+".") {
			return true
		}
	}
	return false
}

// Filter returns the findings that only selects (all when only is empty):
// by finding id, check id or category.
func (r Report) Filter(only []string) Report {
	out := r
	out.Findings, out.Worst, out.Counts = nil, OK, map[string]int{}
	for _, f := range r.Findings {
		if selected(f, only) {
			out.Findings = append(out.Findings, f)
			out.Counts[f.Severity.String()]++
			out.Worst = max(out.Worst, f.Severity)
		}
	}
	return out
}

// IDs lists the ids of the checks, sorted (for `doctor --list`).
func IDs(checks []Check) []string {
	var ids []string
	for _, c := range checks {
		ids = append(ids, c.ID)
	}
	sort.Strings(ids)
	return ids
}

// plural picks the message id for a count: one's when n is 1, else many's
// (Chinese has one text for both; English needs the two).
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
