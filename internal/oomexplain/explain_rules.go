package oomexplain

import (
	"fmt"
	"strings"

	"github.com/torchmem/torchmem/internal/units"
)

// explainWith dispatches to the incident kind's rules.
func explainWith(incs []Incident, i int, ctx Context) Explanation {
	inc := &incs[i]
	var e Explanation
	switch inc.Kind {
	case KindKernelOOM:
		e = explainKernel(inc, ctx)
	case KindCUDAOOM, KindCUDAMallocAsync:
		e = explainCUDA(inc, ctx)
	case KindCUDAError, KindCUBLASAlloc, KindNCCLOOM:
		e = explainCUDAOther(inc, ctx)
	default:
		e = explainHost(incs, i, ctx)
	}
	for _, j := range inc.Related {
		if j >= 0 && j < len(incs) && j != i {
			e.Arithmetic = append(e.Arithmetic, relatedNote(&incs[j]))
		}
	}
	return e
}

func relatedNote(o *Incident) string {
	where := o.Source
	if o.Line > 0 {
		where = fmt.Sprintf("%s:%d", o.Source, o.Line)
	}
	return fmt.Sprintf("same event: %s at %s", describeKind(o), where)
}

func describeKind(o *Incident) string {
	switch {
	case o.Kind == KindKernelOOM && o.Kernel != nil && o.Kernel.Victim != nil:
		return fmt.Sprintf("kernel OOM kill of %s (pid %d)", o.Kernel.Victim.Comm, o.Kernel.Victim.PID)
	case len(o.PIDs) > 0:
		return fmt.Sprintf("%s (pid %s)", o.Kind, joinInts(o.PIDs))
	}
	return string(o.Kind)
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
	if v := k.Kernel.Victim; v != nil && hasInt(o.PIDs, v.PID) {
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
