package supervisor

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"golang.org/x/text/language"

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
	s.PrintIn(w, runID, s.lang)
}

// PrintIn writes the summary for people with its frame (run, peaks,
// steps, evidence) in lang: the verdicts and recommendations are the
// summary's own, localized by Config.Lang when the run ended, or English
// for a summary read back from the history store.
func (s *Summary) PrintIn(w io.Writer, runID string, lang language.Tag) {
	t := tr(lang)
	s = s.forPeople(lang)
	status := ""
	if s.Cause != CauseExitCode {
		status = t("pm.exit_status", s.ExitCode)
	}
	fmt.Fprintln(w, t("pm.header", runID, termsafe.Line(s.Verdict), status, fmt.Sprintf("%.1f", s.Duration)))
	if s.Cgroup != "" {
		line := t("pm.cgroup", termsafe.Line(s.Cgroup))
		if s.CgroupLimit != nil {
			line += t("pm.limit", units.Bytes(*s.CgroupLimit))
		}
		if e := s.CgroupEvents; e != nil {
			line += t("pm.events", eventsText(e))
		}
		fmt.Fprintln(w, line)
	}
	if len(s.Peaks) > 0 {
		fmt.Fprintln(w, t("pm.peaks", peaksText(s.Peaks, t)))
	}
	if s.Hooked > 0 {
		fmt.Fprintln(w, t("pm.steps", s.Steps, s.Hooked, s.PerStep.text(t)))
	}
	if s.OrphansKilled > 0 {
		fmt.Fprintln(w, t("pm.orphans", s.OrphansKilled))
	}
	for _, l := range s.KernelLines {
		fmt.Fprintln(w, t("pm.kernel", termsafe.Line(l)))
	}
	if s.Exception != "" {
		fmt.Fprintln(w, t("pm.exception", termsafe.Line(s.Exception)))
	}
	for _, n := range s.Notes {
		fmt.Fprintln(w, t("pm.evidence", termsafe.Line(n)))
	}
	if o := s.CUDAOOM; o != nil && o.Snapshot != "" {
		fmt.Fprintln(w, t("pm.snapshot", termsafe.Line(o.Snapshot)))
	} else if o != nil && o.SnapshotErr != "" {
		fmt.Fprintln(w, t("pm.no_snapshot", termsafe.Line(o.SnapshotErr)))
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
			parts = append(parts, fmt.Sprintf("%s %d", f.n, *f.v))
		}
	}
	return strings.Join(parts, ", ")
}

// sparsePeaks are the peaks of sparse series: PSS is read every few
// seconds only (pssEvery), so its peak can miss a short spike that the
// cgroup's own high-water mark and RSS (every tick) catch.
var sparsePeaks = map[string]bool{string(store.PeakPSSTotal): true}

func peaksText(p map[string]int64, t func(string, ...any) string) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		if p[k] > 0 {
			part := k + " " + units.Bytes(p[k])
			if sparsePeaks[k] {
				part += t("pm.peak_sparse", pssEvery.String())
			}
			parts = append(parts, part)
		}
	}
	return strings.Join(parts, t("pm.sep"))
}

func (p *StepPeaks) text(t func(string, ...any) string) string {
	if p == nil {
		return ""
	}
	var parts []string
	if p.Allocated > 0 {
		parts = append(parts, t("pm.step_alloc", units.Bytes(p.Allocated), p.AllocatedStep))
	}
	if p.Reserved > 0 {
		parts = append(parts, t("pm.step_rsv", units.Bytes(p.Reserved), p.ReservedStep))
	}
	if p.MedianStepTime != nil {
		parts = append(parts, t("pm.step_median", fmt.Sprintf("%.1f", *p.MedianStepTime*1000)))
	}
	if len(parts) == 0 {
		return ""
	}
	return t("pm.step_list", strings.Join(parts, t("pm.sep")))
}
