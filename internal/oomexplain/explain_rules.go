package oomexplain

// explainWith dispatches to the incident kind's rules.
func explainWith(incs []Incident, i int, ctx Context) Explanation {
	inc := &incs[i]
	switch inc.Kind {
	case KindKernelOOM:
		return explainKernel(inc, ctx)
	}
	return Explanation{Verdict: VerdictGPUOOM, Summary: string(inc.Kind)}
}

func explainKernel(inc *Incident, ctx Context) Explanation {
	return Explanation{Verdict: VerdictHostExhausted}
}

// sameStory: the non-kernel incident j names the kernel victim's pid.
func sameStory(k, o *Incident) bool {
	if k.Kernel == nil || k.Kernel.Victim == nil {
		return false
	}
	return hasInt(o.PIDs, k.Kernel.Victim.PID)
}
