// Package policy turns threshold rules (from --gpu-threshold,
// --host-threshold or a --policy file) into actions. The decision,
// Evaluate, is a pure function of the rules, the previous state, the time
// and the current metric values: no clock, no I/O, so it is table-tested
// without processes.
package policy

import (
	"fmt"
	"strings"
	"time"

	"github.com/torchmem/torchmem/internal/units"
)

// Metric names the values a rule can watch. The supervisor fills them
// from its sample; each says where its number comes from.
const (
	// GPUUsedFraction: highest used/total over the job's GPUs (NVML).
	GPUUsedFraction = "gpu.used_fraction"
	// AllocReservedFraction: highest allocator reserved / GPU total over
	// the job's processes (hook memory_stats).
	AllocReservedFraction = "allocator.reserved_fraction"
	// CgroupUsageFraction: job cgroup usage / its memory limit (cgroup).
	CgroupUsageFraction = "cgroup.usage_fraction"
	// CgroupUsageBytes: job cgroup usage in bytes (cgroup).
	CgroupUsageBytes = "cgroup.usage_bytes"
	// HostAvailableBytes: MemAvailable of the host (/proc/meminfo).
	HostAvailableBytes = "host.available_bytes"
	// HostUsedFraction: 1 - MemAvailable/MemTotal (/proc/meminfo).
	HostUsedFraction = "host.used_fraction"
	// JobPSSBytes: summed PSS of the job's processes (smaps_rollup).
	JobPSSBytes = "job.pss_bytes"
	// PSISomeAvg10 and PSIFullAvg10: the share of the last 10 s (percent,
	// 0-100, as the kernel prints it) in which some / all of the tasks
	// stalled on memory: the job cgroup's memory.pressure on cgroup v2,
	// the host's /proc/pressure/memory otherwise.
	PSISomeAvg10 = "psi.memory.some_avg10"
	PSIFullAvg10 = "psi.memory.full_avg10"
	// CgroupTimeToOOM: seconds until the job cgroup's usage reaches its
	// limit at the current growth rate (Project over cgroup usage);
	// absent when it is not growing steadily or has no limit.
	CgroupTimeToOOM = "cgroup.time_to_oom"
	// GPUTimeToOOM: the least, over the job's GPUs, of the seconds until
	// the device's used memory (NVML) reaches its total at the current
	// growth rate; absent when none is growing steadily.
	GPUTimeToOOM = "gpu.time_to_oom"
)

// Metrics is the set of names a rule may use.
var Metrics = []string{GPUUsedFraction, AllocReservedFraction, CgroupUsageFraction,
	CgroupUsageBytes, HostAvailableBytes, HostUsedFraction, JobPSSBytes,
	PSISomeAvg10, PSIFullAvg10, CgroupTimeToOOM, GPUTimeToOOM}

// Actions a rule can take.
const (
	Warn     = "warn"     // one line on stderr and an event in the store
	Cleanup  = "cleanup"  // hook: gc.collect() + torch.cuda.empty_cache()
	Snapshot = "snapshot" // hook: dump a memory snapshot
	Signal   = "signal"   // send Rule.Signal to the job's process group
	Stop     = "stop"     // SIGTERM the job, SIGKILL its cgroup after the grace period
	// Exec runs Rule.Target with sh -c, TORCHMEM_RUN_ID, TORCHMEM_RULE,
	// TORCHMEM_METRIC and TORCHMEM_VALUE in its environment, for a bounded
	// time ("exec:CMD" in a policy file).
	Exec = "exec"
	// Notify sends one small JSON object to Rule.Target: an HTTP POST to a
	// loopback http URL or a unix:PATH socket, or one line on fifo:PATH
	// ("notify:URL" in a policy file).
	Notify = "notify"
)

// Actions lists every action a rule may take.
var Actions = []string{Warn, Cleanup, Snapshot, Signal, Stop, Exec, Notify}

// Rule is a condition over one metric held for a duration, and the action
// taken when it holds, at most once per Every.
type Rule struct {
	Name   string
	Metric string
	// Above: the condition is value >= Threshold; else value <= Threshold.
	Above     bool
	Threshold float64
	// For: how long the condition must hold before acting (0: at once).
	For    time.Duration
	Action string
	// Signal: the signal name for the signal action ("SIGUSR1").
	Signal string
	// Target: the command of exec, the URL (or unix:PATH, fifo:PATH) of
	// notify; "" for the other actions.
	Target string
	// Every: the rate limit; the action repeats at most this often while
	// the condition keeps holding.
	Every time.Duration
	// After: the rule is inert until the job has run this long (0: from
	// the start). Start-up's ramp — imports, the CUDA context, DataLoader
	// workers forking — grows memory steadily for seconds and projects
	// an OOM that training never reaches; a stop rule on time_to_oom
	// should not fire on it.
	After time.Duration
}

// String describes the rule the way it is written in a policy file.
func (r Rule) String() string {
	op := "<="
	if r.Above {
		op = ">="
	}
	s := fmt.Sprintf("%s %s %s %s", r.Name, r.Metric, op, formatThreshold(r.Metric, r.Threshold))
	if r.For > 0 {
		s += " for " + r.For.String()
	}
	if r.After > 0 {
		s += " after " + r.After.String()
	}
	s += " -> " + r.Action
	if r.Target != "" {
		s += ":" + r.Target
	}
	return s
}

// State is what Evaluate remembers between calls, per rule index.
type State struct {
	// Since: when the condition started holding (zero: not holding).
	Since []time.Time
	// Last: when the action last fired (zero: never).
	Last []time.Time
	// Start: when the job started, for rules with After (zero: unknown,
	// After is then not applied).
	Start time.Time
}

// Decision is one action to take now.
type Decision struct {
	Rule  Rule
	Index int     // of Rule in the rules given to Evaluate
	Value float64 // the metric value that triggered it
}

// Reason is a one-line explanation of the decision.
func (d Decision) Reason() string {
	return d.Rule.Name + ": " + d.Condition()
}

// Condition is the reason without the rule's name: "cgroup.time_to_oom
// = 11.3s (threshold 20.0s)", for sentences that name the rule already.
func (d Decision) Condition() string {
	value, threshold := d.Shown()
	return fmt.Sprintf("%s = %s (threshold %s)", d.Rule.Metric, value, threshold)
}

// Shown is the value and the threshold as Condition writes them, for a
// caller that words the condition in another language.
func (d Decision) Shown() (value, threshold string) {
	return formatThreshold(d.Rule.Metric, d.Value), formatThreshold(d.Rule.Metric, d.Rule.Threshold)
}

// Evaluate returns the actions due at now given the metric values, and the
// new state; prev is left as it was. A caller that could not carry an action out (no process to
// send it to yet) restores State.Last[d.Index] so the rate limit does not
// swallow the next chance. A metric missing from values makes its rule's condition false
// (a source that went away never triggers an action).
func Evaluate(rules []Rule, prev State, now time.Time, values map[string]float64) (State, []Decision) {
	next := State{Since: make([]time.Time, len(rules)), Last: make([]time.Time, len(rules)), Start: prev.Start}
	copy(next.Since, prev.Since)
	copy(next.Last, prev.Last)
	var out []Decision
	for i, r := range rules {
		v, ok := values[r.Metric]
		if !ok || !holds(r, v) || tooEarly(r, prev.Start, now) {
			next.Since[i] = time.Time{}
			continue
		}
		if next.Since[i].IsZero() {
			next.Since[i] = now
		}
		if now.Sub(next.Since[i]) < r.For {
			continue
		}
		if !next.Last[i].IsZero() && now.Sub(next.Last[i]) < r.Every {
			continue
		}
		next.Last[i] = now
		out = append(out, Decision{Rule: r, Index: i, Value: v})
	}
	return next, out
}

// tooEarly: the job is younger than the rule's After.
func tooEarly(r Rule, start, now time.Time) bool {
	return r.After > 0 && !start.IsZero() && now.Sub(start) < r.After
}

func holds(r Rule, v float64) bool {
	if r.Above {
		return v >= r.Threshold
	}
	return v <= r.Threshold
}

func formatThreshold(metric string, v float64) string {
	switch kindOf(metric) {
	case kindFraction:
		return fmt.Sprintf("%.1f%%", v*100)
	case kindPercent:
		return fmt.Sprintf("%.2f%%", v)
	case kindSeconds:
		return fmt.Sprintf("%.1fs", v)
	}
	// Byte counts in IEC units like every human output ("827.17 MiB",
	// not "867346432"); JSON events keep the exact value in data.value.
	return units.Bytes(int64(v))
}

// The units of a metric's value, which decide how its threshold is
// written and shown.
const (
	kindBytes    = iota // a byte count ("2G"), or a plain number
	kindFraction        // 0-1, written "90%" or "0.9"
	kindPercent         // PSI's 0-100, written "10" or "10%"
	kindSeconds         // a duration, written "30s" or a number of seconds
)

func kindOf(metric string) int {
	switch {
	case strings.HasSuffix(metric, "_fraction"):
		return kindFraction
	case strings.HasPrefix(metric, "psi."):
		return kindPercent
	case strings.HasSuffix(metric, ".time_to_oom"):
		return kindSeconds
	}
	return kindBytes
}
