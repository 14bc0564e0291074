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

// jobIncidents runs the kernel lines and the hook's exception texts
// through oomexplain once and keeps the incidents about this job: the
// victims and the explanations both come from them.
func (e evidence) jobIncidents() []oomexplain.Incident {
	lines := append([]string(nil), e.kernel...)
	for _, x := range e.excs {
		lines = append(lines, strings.Split(x.Text, "\n")...)
	}
	return e.incidents(lines)
}

// explainIncidents explains the job's incidents with what the supervisor
// knows (PIDs, cgroup, limit, allocator stats).
func explainIncidents(e evidence, mine []oomexplain.Incident) []Explained {
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
	if v, ok := e.allocPeaks["alloc_peak_allocated"]; ok {
		ctx.MemoryStats["allocated_bytes.all.peak"] = v
	}
	if v, ok := e.allocPeaks["alloc_peak_reserved"]; ok {
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
