package oomexplain

// Correlate links incidents that tell one story: a DataLoader worker
// "killed by signal: Killed", a torchrun child with exitcode -9, or a
// Slurm oom-kill event, and the kernel OOM kill of the same pid (or, when
// pids are unknown, within the same short time window). It sets Related
// on both sides (indexes into incs).
func Correlate(incs []Incident) {
	for i := range incs {
		switch incs[i].Kind {
		case KindKernelOOM:
			for j := range incs {
				if j != i && incs[j].Kind != KindKernelOOM && sameStory(&incs[i], &incs[j]) {
					link(incs, i, j)
				}
			}
		case KindSlurmOOM:
			for j := range incs {
				if killedBySomeone(incs[j].Kind) && sameLogNearby(&incs[i], &incs[j]) {
					link(incs, i, j)
				}
			}
		}
	}
}

// killedBySomeone: incidents that report a kill without saying by whom.
func killedBySomeone(k Kind) bool {
	return k == KindDataLoaderKilled || k == KindDataLoaderExited || k == KindTorchrunSIGKILL || k == KindShellKilled
}

// sameLogNearby: Slurm prints its oom-kill line into the job's output
// right after the training process reports its dead worker.
func sameLogNearby(a, b *Incident) bool {
	d := a.Line - b.Line
	return a.Source == b.Source && d > -50 && d < 50
}

func link(incs []Incident, i, j int) {
	if !hasInt(incs[i].Related, j) {
		incs[i].Related = append(incs[i].Related, j)
	}
	if !hasInt(incs[j].Related, i) {
		incs[j].Related = append(incs[j].Related, i)
	}
}

func hasInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
