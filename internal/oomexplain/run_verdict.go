package oomexplain

import (
	"fmt"
	"strings"
	"time"

	"github.com/torchmem/torchmem/internal/units"
)

// runVerdictMsg is the post-mortem's one line: the cause and, for an
// out-of-memory end, the primary incident's summary.
func runVerdictMsg(ev RunEvidence, rv RunVerdict, incs []Incident) Msg {
	m := causeMsg(ev, rv, incs)
	if len(rv.Victims) > 0 {
		m = msgOf("run.verdict.with_victims", m, victimsArg(rv.Victims))
	}
	if ev.Interrupts > 0 && rv.Cause == CauseSignal {
		// Not a crash: the user stopped it.
		m = msgOf("run.verdict.interrupted", itoa(ev.Interrupts), m)
	}
	return m
}

func causeMsg(ev RunEvidence, rv RunVerdict, incs []Incident) Msg {
	switch rv.Cause {
	case CauseOK:
		return msg("run.verdict.ok")
	case CauseExitCode:
		if cudaClaimed(ev, incs) && cudaImpossible(ev) {
			return msg("run.verdict.exit_claim", itoa(ev.ExitCode))
		}
		if rv.Exception != "" {
			return msg("run.verdict.exit_exception", itoa(ev.ExitCode), firstLineOf(rv.Exception))
		}
		return msg("run.verdict.exit", itoa(ev.ExitCode))
	case CauseSignal:
		return msg("run.verdict.signal", sigName(valInt(ev.Signal)))
	case CausePolicyStop:
		ps := ev.PolicyStop
		var cond any = ps.Reason
		if ps.Metric != "" {
			cond = msg("run.policy_condition", ps.Metric, ps.Value, ps.Threshold)
		}
		return msgOf("run.verdict.policy_stop", ps.Rule, cond, ps.Signal, exitText(ev))
	}
	head := causeHead(ev, rv.Cause)
	if p := primary(rv.Cause, incs); p != nil && p.Explanation != nil {
		// The incident's summary is printed under the verdict; the line
		// names its verdict and what it cannot rule out.
		vs := append([]Verdict{p.Explanation.Verdict}, p.Explanation.Alternatives...)
		return msgOf("run.verdict.explained", head, verdictList(vs))
	}
	return head
}

// causeHead names the cause with the figure that matters most: the
// cgroup's limit, or the request the hook saw fail.
func causeHead(ev RunEvidence, cause string) Msg {
	switch {
	case cause == CauseCgroupOOMKill && ev.CgroupLimitBytes != nil:
		return msg("run.verdict.cgroup_oom_kill_limit", units.Bytes(*ev.CgroupLimitBytes))
	case cause == CauseCUDAOOM && len(ev.CUDAOOMs) > 0 && ev.CUDAOOMs[len(ev.CUDAOOMs)-1].Requested >= 0:
		o := ev.CUDAOOMs[len(ev.CUDAOOMs)-1]
		return msg("run.verdict.cuda_oom_request", itoa(o.Device), units.Bytes(o.Requested))
	}
	return msg("run.verdict." + strings.ReplaceAll(cause, "-", "_"))
}

// primary is the incident that tells the cause's story.
func primary(cause string, incs []Incident) *Incident {
	want := map[string][]Kind{
		CauseCUDAOOM:       {KindCUDAOOM, KindCUDAMallocAsync, KindCUDAError, KindCUBLASAlloc, KindNCCLOOM},
		CauseWorkerKilled:  {KindDataLoaderKilled, KindDataLoaderExited, KindSharedMemory, KindKernelOOM},
		CauseCgroupOOMKill: {KindKernelOOM},
		CauseHostOOMKill:   {KindKernelOOM},
	}[cause]
	for _, k := range want {
		for i := range incs {
			if incs[i].Kind == k {
				return &incs[i]
			}
		}
	}
	return nil
}

func victimsArg(vs []RunVictim) Arg {
	var parts []Msg
	for _, v := range vs {
		switch {
		case v.Worker:
			parts = append(parts, msg("run.victim.worker", itoa(v.PID), v.Comm))
		case v.Main:
			parts = append(parts, msg("run.victim.main", itoa(v.PID), v.Comm))
		default:
			parts = append(parts, msg("run.victim.child", itoa(v.PID), v.Comm))
		}
	}
	return listArg(parts, ", ")
}

// runAdvice merges the incidents' advice; a leak's comes first, since a
// larger limit only delays its kill.
func runAdvice(ev RunEvidence, rv RunVerdict, incs []Incident) []string {
	var out []string
	if g := ev.Growth; g != nil {
		out = append(out, render(ev.Lang, leakAdvice(rv.Cause, *g)))
	}
	out = append(out, copyOnReadAdvice(ev)...)
	seen := map[string]bool{}
	for _, inc := range incs {
		if inc.Explanation == nil {
			continue
		}
		for _, r := range inc.Explanation.Recommendations {
			if !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	return out
}

// leakAdvice words a steady climb by how the run ended: it caused the
// kill, it was stopped before one, or it did not end this run but will
// end a longer one.
func leakAdvice(cause string, g Growth) Msg {
	args := []string{units.Bytes(int64(g.BytesPerStep)), fmt.Sprint(g.FromStep), fmt.Sprint(g.ToStep), fmt.Sprintf("%.2f", g.R2)}
	switch cause {
	case CauseCgroupOOMKill, CauseHostOOMKill:
		return msg("run.advice.leak", args...)
	case CausePolicyStop:
		return msg("run.advice.leak_stopped", args...)
	}
	return msg("run.advice.leak_seen", args...)
}

// exitText is how the job ended, as the verdict's last words: "SIGTERM"
// or "status 0".
func exitText(ev RunEvidence) string {
	if ev.Signal != nil {
		return sigName(*ev.Signal)
	}
	return "status " + itoa(ev.ExitCode)
}

func firstLineOf(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func valInt(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// timeToOOMNotes says what torchmem projected before the end, next to what
// happened: for a run that ran out of memory, or one a rule acted on.
func timeToOOMNotes(ev RunEvidence, rv RunVerdict) []Msg {
	p := ev.TimeToOOM
	oom := rv.Cause == CauseCgroupOOMKill || rv.Cause == CauseHostOOMKill || rv.Cause == CauseCUDAOOM || rv.Cause == CausePolicyStop
	if p == nil || (!oom && p.Rule == "") {
		return nil
	}
	res := msg("run.resource.cgroup")
	if dev, ok := strings.CutPrefix(p.Resource, "gpu"); ok {
		res = msg("run.resource.gpu", dev)
	}
	args := []any{seconds(p.Before), res, seconds(p.Seconds), units.Bytes(int64(p.BytesPerSecond))}
	if p.Rule != "" {
		return []Msg{msgOf("run.note.time_to_oom_rule", append(args, p.Rule)...)}
	}
	return []Msg{msgOf("run.note.time_to_oom", args...)}
}

// seconds is a duration the way people read it: "42.0s", "3m12s".
func seconds(s float64) string {
	if s < 60 {
		return fmt.Sprintf("%.1fs", s)
	}
	return time.Duration(s * float64(time.Second)).Round(time.Second).String()
}
