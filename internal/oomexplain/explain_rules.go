package oomexplain

import (
	"fmt"
	"strings"

	"github.com/torchmem/torchmem/internal/units"
)

// explainWith dispatches to the incident kind's rules and renders.
func explainWith(incs []Incident, i int, ctx Context) Explanation {
	inc := &incs[i]
	var fd finding
	switch inc.Kind {
	case KindKernelOOM:
		fd = explainKernel(inc, ctx)
		if fd.verdict == VerdictIncomplete {
			// Cut reports: the previous event's limit first, then both
			// usual candidates, which a lone kill line cannot separate.
			fd.alts = appendUnique(fd.alts, previousKernelVerdict(incs, i, ctx)...)
			fd.alts = appendUnique(fd.alts, VerdictHostExhausted, VerdictCgroupLimit)
		}
	case KindCUDAOOM, KindCUDAMallocAsync:
		fd = explainCUDA(inc, ctx)
	case KindCUDAError, KindCUBLASAlloc, KindNCCLOOM:
		fd = explainCUDAOther(inc, ctx)
	default:
		fd = explainHost(incs, i, ctx)
	}
	fd.note(incidentNotes(inc)...)
	for _, j := range inc.Related {
		if j >= 0 && j < len(incs) && j != i {
			fd.note(relatedNote(&incs[j]))
		}
	}
	return fd.render(ctx.Lang)
}

// previousKernelVerdict: a report cut after its header that follows
// another in the same paste is most likely the same limit again.
func previousKernelVerdict(incs []Incident, i int, ctx Context) []Verdict {
	for j := i - 1; j >= 0; j-- {
		if p := &incs[j]; p.Kind == KindKernelOOM && p.Source == incs[i].Source {
			if v, _, _ := kernelScope(p.Kernel); v != VerdictIncomplete {
				return []Verdict{v}
			}
			return nil
		}
	}
	return nil
}

// incidentNotes: what the reader must know about the incident's record
// itself (a year the log did not give, a claim the job made).
func incidentNotes(inc *Incident) []Msg {
	var out []Msg
	if inc.TimeYearAssumed {
		out = append(out, msg("note.year_assumed"))
	}
	return out
}

func relatedNote(o *Incident) Msg {
	where := o.Source
	if o.Line > 0 {
		where = fmt.Sprintf("%s:%d", o.Source, o.Line)
	}
	return msgOf("note.related", describeKind(o), where)
}

func describeKind(o *Incident) Msg {
	switch {
	case o.Kind == KindKernelOOM && o.Kernel != nil && o.Kernel.Victim != nil:
		return msg("note.kernel_kill_of", o.Kernel.Victim.Comm, itoa(o.Kernel.Victim.PID))
	case len(o.PIDs) > 0:
		return msg("note.kind_pids", string(o.Kind), joinInts(o.PIDs))
	}
	return msg("note.kind", string(o.Kind))
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// b prints a size the way PyTorch does ("1.40 GiB").
func b(n int64) string { return units.Bytes(n) }

func pct(part, whole int64) string {
	if whole <= 0 {
		return "?"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(part)/float64(whole))
}

func val(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// sameStory: the non-kernel incident o is about the kernel victim's pid,
// or both carry wall-clock times within a minute of each other.
func sameStory(k, o *Incident) bool {
	if k.Kernel == nil {
		return false
	}
	if v := k.Kernel.Victim; v != nil && (hasInt(o.PIDs, v.PID) || sameCommand(v.Comm, o)) {
		return true
	}
	// A bare "Killed" pasted next to the kernel's report of a kill.
	if o.Kind == KindShellKilled && len(o.PIDs) == 0 && (o.Failure == nil || o.Failure.Program == "") && sameLogNearby(k, o) {
		return true
	}
	// No pid in common (a container shows its own pid namespace to the
	// training log): a kill reported within a minute of the kernel's is
	// taken to be the same one.
	if (o.Kind == KindSlurmOOM || killedBySomeone(o.Kind)) && k.Time != nil && o.Time != nil {
		d := k.Time.Sub(*o.Time)
		return d > -time60 && d < time60
	}
	return false
}

// sameCommand: a shell's kill report names the command; the kernel's
// names the victim's comm, the executable's base name cut to 15 bytes
// (TASK_COMM_LEN). Within one paste, a match is the same process.
func sameCommand(comm string, o *Incident) bool {
	if o.Kind != KindShellKilled || o.Failure == nil || o.Failure.Program == "" || comm == "" {
		return false
	}
	exe, _, _ := strings.Cut(strings.TrimSpace(o.Failure.Program), " ")
	if i := strings.LastIndexByte(exe, '/'); i >= 0 {
		exe = exe[i+1:]
	}
	if len(exe) > 15 {
		exe = exe[:15]
	}
	return exe == comm
}
