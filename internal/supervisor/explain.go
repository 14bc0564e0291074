package supervisor

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"syscall"

	"github.com/torchmem/torchmem/internal/jobcgroup"
	"github.com/torchmem/torchmem/internal/termsafe"
	"github.com/torchmem/torchmem/internal/units"
)

// explain fills the verdict and concrete recommendations.
func explain(s *Summary) {
	b := func(k string) string { return units.Bytes(s.Peaks[k]) }
	limit := "its limit"
	if s.CgroupLimit != nil {
		limit = "its limit of " + units.Bytes(*s.CgroupLimit)
	}
	switch s.Cause {
	case CauseOK:
		s.Verdict = "exited normally"
	case CauseExitCode:
		s.Verdict = fmt.Sprintf("exited with status %d", s.ExitCode)
		if s.Exception != "" {
			s.Verdict += " after an uncaught " + firstLine(s.Exception)
		}
	case CauseSignal:
		s.Verdict = fmt.Sprintf("killed by %s (not by the OOM killer)", sigName(syscall.Signal(sigOf(s.Signal))))
	case CauseCgroupOOMKill:
		s.Verdict = fmt.Sprintf("killed by the kernel OOM killer: the job's cgroup reached %s (peak %s)", limit, b("cgroup_usage"))
		s.Recommendations = append(s.Recommendations,
			fmt.Sprintf("raise --memory-max above the peak host memory the job needs (peak cgroup usage %s)", b("cgroup_usage")),
			"or lower host memory: fewer DataLoader workers (num_workers) or a smaller prefetch_factor; each worker holds its own copy of Python objects touched after fork")
	case CauseHostOOMKill:
		s.Verdict = "killed by the kernel OOM killer: the whole host ran out of memory"
		s.Recommendations = append(s.Recommendations,
			"run with --memory-max below the host's RAM so the job, not the host, hits the limit and other work survives",
			"fewer DataLoader workers or a smaller prefetch_factor")
	case CauseCUDAOOM:
		s.Verdict = "CUDA out of memory"
		s.cudaAdvice()
	case CauseWorkerKilled:
		s.Verdict = "a DataLoader worker was killed"
		s.Recommendations = append(s.Recommendations,
			"fewer DataLoader workers (num_workers) or raise --memory-max; workers are the OOM killer's first victims",
			"if the error mentions shared memory or a bus error, /dev/shm is too small: enlarge it (docker --shm-size) or set the sharing strategy to file_system")
	}
	for _, v := range s.Victims {
		role := "main process"
		if v.Worker {
			role = "DataLoader worker"
		} else if !v.Main {
			role = "child process"
		}
		s.Verdict += fmt.Sprintf("; victim %s %d (%s)", role, v.PID, v.Comm)
	}
}

func (s *Summary) cudaAdvice() {
	o := s.CUDAOOM
	if o != nil && o.Alloc > 0 {
		s.Verdict += fmt.Sprintf(" on device %d: tried to allocate %s with %s free on the device", o.Device, units.Bytes(o.Alloc), units.Bytes(o.DeviceFree))
	}
	if s.Fragmentation == "fragmentation" || s.Fragmentation == "partial fragmentation" {
		s.Verdict += " (" + s.Fragmentation + ": the allocator held reserved memory it could not use)"
		s.Recommendations = append(s.Recommendations, "set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True so freed blocks can be reused for larger tensors")
	}
	s.Recommendations = append(s.Recommendations,
		fmt.Sprintf("lower the batch size (peak allocated %s, reserved %s)", units.Bytes(s.Peaks["alloc_peak_allocated"]), units.Bytes(s.Peaks["alloc_peak_reserved"])),
		"use mixed precision (torch.autocast) or activation checkpointing to cut activation memory")
}

func sigOf(p *int) (n int) {
	if p != nil {
		n = *p
	}
	return n
}

// Print writes the summary for people.
func (s *Summary) Print(w io.Writer, runID string) {
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

func eventsText(ev *jobcgroup.Events) string {
	var parts []string
	for _, f := range []struct {
		n string
		v *int64
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
var peakNote = map[string]string{"pss_total": " (read every " + pssEvery.String() + ")"}

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
