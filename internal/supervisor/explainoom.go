package supervisor

import (
	"strings"

	"github.com/torchmem/torchmem/internal/oomexplain"
)

// Explained is one incident as internal/oomexplain (the code behind
// `torchmem oom`) reads and explains it.
type Explained struct {
	Kind        oomexplain.Kind        `json:"kind"`
	PIDs        []int                  `json:"pids,omitempty"`
	Explanation oomexplain.Explanation `json:"explanation"`
}

// explainIncidents runs the kernel lines and the hook's exception texts
// through oomexplain, keeps the incidents about this job, and returns them
// explained with what the supervisor knows (PIDs, cgroup, limit,
// allocator stats).
func explainIncidents(e evidence, allocPeaks map[string]int64) []Explained {
	var texts []string
	for _, x := range e.excs {
		texts = append(texts, strings.Split(x.Text, "\n")...)
	}
	mine := e.incidents(append(append([]string(nil), e.kernel...), texts...))
	if len(mine) == 0 {
		return nil
	}
	ctx := oomexplain.Context{CgroupPath: e.cgroupRel, MemoryStats: map[string]int64{}}
	for pid := range e.jobPIDs {
		ctx.JobPIDs = append(ctx.JobPIDs, pid)
	}
	if e.limit != nil {
		ctx.CgroupLimitBytes = *e.limit
	}
	if v, ok := allocPeaks["alloc_peak_allocated"]; ok {
		ctx.MemoryStats["allocated_bytes.all.peak"] = v
	}
	if v, ok := allocPeaks["alloc_peak_reserved"]; ok {
		ctx.MemoryStats["reserved_bytes.all.peak"] = v
	}
	oomexplain.ExplainAll(mine, ctx)
	out := make([]Explained, 0, len(mine))
	for _, inc := range mine {
		if inc.Explanation != nil {
			out = append(out, Explained{Kind: inc.Kind, PIDs: inc.PIDs, Explanation: *inc.Explanation})
		}
	}
	return out
}

// incidents parses lines with oomexplain and keeps those about this job.
func (e evidence) incidents(lines []string) []oomexplain.Incident {
	p := oomexplain.NewParser(oomexplain.Options{Source: "run"})
	for _, l := range lines {
		p.FeedBytes([]byte(l))
	}
	var mine []oomexplain.Incident
	for _, inc := range p.Close() {
		if e.about(inc) {
			mine = append(mine, inc)
		}
	}
	return mine
}

// kernelIncidents are the kernel OOM reports about this job.
func (e evidence) kernelIncidents() []oomexplain.Incident {
	var out []oomexplain.Incident
	for _, inc := range e.incidents(e.kernel) {
		if inc.Kind == oomexplain.KindKernelOOM {
			out = append(out, inc)
		}
	}
	return out
}

// about: a kernel incident must name one of the job's PIDs or its cgroup;
// incidents from the job's own exception text are always its own.
func (e evidence) about(inc oomexplain.Incident) bool {
	if inc.Kind != oomexplain.KindKernelOOM {
		return true
	}
	for _, p := range inc.PIDs {
		if e.jobPIDs[p] {
			return true
		}
	}
	for _, r := range inc.Raw {
		if e.cgroupRel != "" && strings.Contains(r, e.cgroupRel) {
			return true
		}
	}
	return false
}

// mergeAdvice appends recommendations not already given.
func mergeAdvice(have []string, add ...string) []string {
	seen := map[string]bool{}
	for _, h := range have {
		seen[h] = true
	}
	for _, a := range add {
		if !seen[a] {
			seen[a] = true
			have = append(have, a)
		}
	}
	return have
}
