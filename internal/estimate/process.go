package estimate

import "github.com/torchmem/torchmem/internal/estimate/models"

// process is one Python process running jobs one after another, as a
// measuring harness does: one configuration, then del, gc.collect(),
// torch.cuda.empty_cache() and reset_peak_memory_stats(), then the next.
// Estimate replays a job in a fresh process, which is what a user's job
// is; a harness's later rows were measured in a warm one, which differs
// in two ways the rows show (the H200 capture, see EstimateOneProcess):
//   - what PyTorch keeps for the process's life stays: the cuBLAS
//     workspaces, one per handle (the main thread's and the autograd
//     thread's), each in the segment it was carved from. empty_cache()
//     cannot give such a segment back, so its free rest stays cached and
//     the next job's tensors are placed into it;
//   - the harness's "max_memory_allocated() minus the baseline" leaves
//     those workspaces out of the next job's peak allocated.
type process struct {
	alloc    allocator
	fwd, bwd *block // the cuBLAS workspaces made so far
	jobs     int
}

// enter gives e the process's allocator and workspaces (nil p or no job
// run yet: a fresh process, nothing to give). Workspaces already made are
// the job's baseline, not counted in its allocated bytes.
func (p *process) enter(e *ctx) {
	if p == nil || p.jobs == 0 {
		return
	}
	limit := e.m.alloc.limit
	e.m.alloc = p.alloc
	e.m.alloc.limit = limit
	if p.fwd != nil {
		e.fwdWS = &tensor{blk: p.fwd, live: true, cat: CatWorkspace}
	}
	if p.bwd != nil {
		e.ws = &tensor{blk: p.bwd, live: true, cat: CatWorkspace}
	}
}

// run replays one job in the process, then leaves the process as the
// harness does before the next one.
func (p *process) run(md *models.Model, o Options) (*Result, error) {
	e, err := walkIn(md, o, p)
	if err != nil {
		return nil, err
	}
	r := e.result()
	if e.fwdWS != nil {
		p.fwd = e.fwdWS.blk
	}
	if e.ws != nil {
		p.bwd = e.ws.blk
	}
	p.leave(e.m.alloc)
	return r, nil
}

// leave takes the allocator a job ended with and leaves it as the harness
// does before the next job: everything freed but the cuBLAS workspaces,
// wholly free segments given back, the reserved peak reset.
func (p *process) leave(a allocator) {
	p.alloc = a
	var keep []*block
	for _, b := range []*block{p.fwd, p.bwd} {
		if b != nil {
			keep = append(keep, b)
		}
	}
	p.alloc.between(keep...)
	p.jobs++
}
