package supervisor

import (
	"maps"

	"github.com/torchmem/torchmem/internal/jobs"
	"github.com/torchmem/torchmem/internal/sample"
)

// liveProcs bounds the processes Live carries for run --tui's table: a
// job that forks thousands of processes costs the supervisor's tick a
// bounded copy, and no screen shows more rows than this anyway.
const liveProcs = 256

// liveJobs copies the jobs of this tick's sample for the live view, which
// reads them on its own goroutine while the supervisor samples on: every
// figure is copied (the sampler's cached reads stay the sampler's), the
// totals are the whole job's, and past liveProcs processes the rest are
// left out of the rows. It formats nothing: rendering is the view's.
func liveJobs(js []sample.Job) []sample.Job {
	if len(js) == 0 {
		return nil
	}
	out := make([]sample.Job, 0, len(js))
	left := liveProcs
	for _, j := range js {
		c := sample.Job{Key: j.Key, Job: jobs.Job{ID: j.ID, RootPID: j.RootPID, Command: j.Command, Totals: j.Totals}}
		// The supervisor's sample reads no cgroup per job (its own group
		// is read apart) and the job is the user's own: neither cgroup nor
		// identity is carried.
		c.Totals.Sources = maps.Clone(j.Totals.Sources)
		n := min(len(j.Processes), left)
		left -= n
		c.Processes = make([]jobs.Process, n)
		for i, p := range j.Processes[:n] {
			c.Processes[i] = copyProcess(p)
		}
		out = append(out, c)
	}
	return out
}

// copyProcess is p with nothing shared with the sampler.
func copyProcess(p jobs.Process) jobs.Process {
	c := p
	c.Cmdline = append([]string(nil), p.Cmdline...)
	c.GPUIndexes = append([]int(nil), p.GPUIndexes...)
	c.RSSBytes, c.RSSAnonBytes, c.RSSFileBytes = clone(p.RSSBytes), clone(p.RSSAnonBytes), clone(p.RSSFileBytes)
	c.RSSShmemBytes, c.SwapBytes = clone(p.RSSShmemBytes), clone(p.SwapBytes)
	c.PSSBytes, c.USSBytes, c.PrivateDirtyBytes = clone(p.PSSBytes), clone(p.USSBytes), clone(p.PrivateDirtyBytes)
	c.SwapPSSBytes, c.PSSAgeSeconds, c.GPUBytes = clone(p.SwapPSSBytes), clone(p.PSSAgeSeconds), clone(p.GPUBytes)
	c.OOMScore, c.OOMScoreAdj = clone(p.OOMScore), clone(p.OOMScoreAdj)
	return c
}

func clone[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
