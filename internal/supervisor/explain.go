package supervisor

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/torchmem/torchmem/internal/cgroup"
	"github.com/torchmem/torchmem/internal/store"
	"github.com/torchmem/torchmem/internal/termsafe"
	"github.com/torchmem/torchmem/internal/units"
)

func sigOf(p *int) (n int) {
	if p != nil {
		n = *p
	}
	return n
}

// Print writes the summary for people (in Config.Lang).
func (s *Summary) Print(w io.Writer, runID string) {
	s = s.forPeople()
	status := ""
	if s.Cause != CauseExitCode {
		status = fmt.Sprintf(" (exit status %d)", s.ExitCode)
	}
	fmt.Fprintf(w, "torchmem: run %s %s%s after %.1fs\n", runID, termsafe.Line(s.Verdict), status, s.Duration)
	if s.Cgroup != "" {
		line := "  cgroup " + termsafe.Line(s.Cgroup)
		if s.CgroupLimit != nil {
			line += ", limit " + units.Bytes(*s.CgroupLimit)
		}
		if e := s.CgroupEvents; e != nil {
			line += ", events:" + eventsText(e)
		}
		fmt.Fprintln(w, line)
	}
	if len(s.Peaks) > 0 {
		fmt.Fprintln(w, "  peaks: "+peaksText(s.Peaks))
	}
	if s.Hooked > 0 {
		fmt.Fprintf(w, "  optimizer steps: %d, hooked processes: %d%s\n", s.Steps, s.Hooked, s.PerStep.text())
	}
	if s.OrphansKilled > 0 {
		fmt.Fprintf(w, "  killed %d process(es) left behind by the job (orphaned workers)\n", s.OrphansKilled)
	}
	for _, l := range s.KernelLines {
		fmt.Fprintln(w, "  kernel: "+termsafe.Line(l))
	}
	if s.Exception != "" {
		fmt.Fprintln(w, "  exception: "+termsafe.Line(s.Exception))
	}
	for _, n := range s.Notes {
		fmt.Fprintln(w, "  evidence: "+termsafe.Line(n))
	}
	if o := s.CUDAOOM; o != nil && o.Snapshot != "" {
		fmt.Fprintf(w, "  memory snapshot at the OOM: %s (torchmem snapshot summary FILE)\n", termsafe.Line(o.Snapshot))
	} else if o != nil && o.SnapshotErr != "" {
		fmt.Fprintln(w, "  no memory snapshot at the OOM: "+termsafe.Line(o.SnapshotErr))
	}
	for _, in := range s.Incidents {
		fmt.Fprintf(w, "  %s: %s\n", in.Explanation.Verdict, termsafe.Line(in.Explanation.Summary))
		for _, a := range in.Explanation.Arithmetic {
			fmt.Fprintln(w, "    "+termsafe.Line(a))
		}
	}
	for _, r := range s.Recommendations {
		fmt.Fprintln(w, "  - "+termsafe.Line(r))
	}
}

func eventsText(ev *cgroup.Events) string {
	var parts []string
	for _, f := range []struct {
		n string
		v *uint64
	}{{"max", ev.Max}, {"high", ev.High}, {"oom", ev.OOM}, {"oom_kill", ev.OOMKill}} {
		if f.v != nil {
			parts = append(parts, fmt.Sprintf(" %s %d", f.n, *f.v))
		}
	}
	return strings.Join(parts, ",")
}

// peakNote says when a peak comes from a sparse series: PSS is read every
// few seconds only (pssEvery), so its peak can miss a short spike that the
// cgroup's own high-water mark and RSS (every tick) catch.
var peakNote = map[string]string{string(store.PeakPSSTotal): " (read every " + pssEvery.String() + ")"}

func peaksText(p map[string]int64) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		if p[k] > 0 {
			parts = append(parts, k+" "+units.Bytes(p[k])+peakNote[k])
		}
	}
	return strings.Join(parts, ", ")
}

func (p *StepPeaks) text() string {
	if p == nil {
		return ""
	}
	var parts []string
	if p.Allocated > 0 {
		parts = append(parts, fmt.Sprintf("peak allocated %s at step %d", units.Bytes(p.Allocated), p.AllocatedStep))
	}
	if p.Reserved > 0 {
		parts = append(parts, fmt.Sprintf("reserved %s at step %d", units.Bytes(p.Reserved), p.ReservedStep))
	}
	if p.MedianStepTime != nil {
		parts = append(parts, fmt.Sprintf("median step %.1f ms", *p.MedianStepTime*1000))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, ", ")
}
