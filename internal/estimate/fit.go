package estimate

import (
	"fmt"
	"sort"

	"github.com/torchmem/torchmem/internal/estimate/models"
)

// Fit says whether a configuration fits a GPU, the largest batch that does,
// and what would save memory.
type Fit struct {
	GPU            string `json:"gpu"`
	GPUMemoryBytes int64  `json:"gpu_memory_bytes"`
	// GPUMemoryUnit: the unit a size given by hand was written in
	// (UnitDecimal, UnitBinary, UnitBytes: gpus.go); empty for a board.
	GPUMemoryUnit string  `json:"gpu_memory_unit,omitempty"`
	Margin        float64 `json:"margin"`
	// BudgetBytes = GPU memory * (1 - margin): what process_bytes must stay under.
	BudgetBytes int64 `json:"budget_bytes"`
	Fits        bool  `json:"fits"`
	// Partial: a trace that stopped before the steps asked for (estimate
	// --trace): Fits says what ran fits, not that the job does.
	Partial bool `json:"partial,omitempty"`
	// ProgramRefused: the traced program read the GPU's free memory (the
	// trace answers it as --gpu's), found the job too large for it and
	// stopped (ProgramRefused in trace_fit.go): it does not fit, whatever
	// the figures of what ran say.
	ProgramRefused bool  `json:"program_refused,omitempty"`
	HeadroomBytes  int64 `json:"headroom_bytes"`
	// OOMInMarginOnly: the replay ran out of memory within the budget, but
	// the whole GPU holds the job (its process bytes, without a limit, are
	// under the GPU's memory and no cap is set): the margin is what is
	// short, not the GPU (marginOnly).
	OOMInMarginOnly bool `json:"oom_in_margin_only,omitempty"`
	MaxBatch        int  `json:"max_batch"`
	// MaxBatchAtLimit: the search stopped at MaxBatchLimit with that batch
	// still fitting, so MaxBatch is a lower bound, not the largest.
	MaxBatchAtLimit bool     `json:"max_batch_at_limit"`
	Levers          []Lever  `json:"levers"`
	Notes           []string `json:"notes,omitempty"`
	// NoteKinds are Notes as a kind and its numbers, one per note in the
	// same order, for a caller that words them in another language (the
	// JSON keeps the English).
	NoteKinds []Note `json:"-"`
	// RetracesNotOffered: a trace's levers found by tracing again (the
	// amp lever) whose retrace failed or saved too little.
	RetracesNotOffered []RetraceNotOffered `json:"retraces_not_offered,omitempty"`
	// Plan: combinations of levers that fit, fastest first (plan.go);
	// searched when the job does not fit, or always with --plan.
	Plan *PlanSearch `json:"plan,omitempty"`
	// TracePlan: a trace's levers combined that fit, fastest first
	// (trace_plan.go); when the job does not fit, or always with --plan.
	TracePlan *TracePlan `json:"trace_plan,omitempty"`
	// Probe: a trace's peak is in a probe before the first optimizer step
	// (AutoBatch's, trace_probe.go): the training steps' figures after it.
	Probe *TraceProbe `json:"training_after_probe,omitempty"`
	// Cap: the job caps PyTorch's allocator under what the budget leaves
	// it (nil: no cap, or one above that).
	Cap *AllocatorCap `json:"allocator_cap,omitempty"`
}

// AllocatorCap is a limit the job sets on what PyTorch's allocator may
// reserve: a fraction of the GPU's memory, set by the program
// (torch.cuda.set_per_process_memory_fraction) or its environment
// (PYTORCH_CUDA_ALLOC_CONF=per_process_memory_fraction:F, torch >= 2.8).
// Reserved memory past it is a CUDA out-of-memory error however much of
// the GPU is free.
type AllocatorCap struct {
	Fraction float64 `json:"fraction"`
	Bytes    int64   `json:"bytes"`
	Source   string  `json:"source"` // CapByProgram or CapByEnv
}

// Where a cap comes from: the program set it itself, or its environment
// (PYTORCH_ALLOC_CONF or PYTORCH_CUDA_ALLOC_CONF).
const (
	CapByProgram = "torch.cuda.set_per_process_memory_fraction"
	CapByEnv     = "per_process_memory_fraction"
)

// Note is one of Fit's notes as its kind and the integers it shows.
type Note struct {
	Kind string // NoteCacheReleases, NoteBatchIsland, NoteLimitReleases
	Args []int
}

// The kinds of Fit's notes.
const (
	// NoteCacheReleases: the allocator frees its cache to go on (Args: the count).
	NoteCacheReleases = "cacheReleases"
	// NoteBatchIsland: the batch fits, a smaller one does not (Args: the batch, the smallest that fails).
	NoteBatchIsland = "batchIsland"
	// NoteLimitReleases: a trace's replay reaches the allocator's limit
	// (the budget, or the job's cap) and frees the cache to go on (Args:
	// the count).
	NoteLimitReleases = "limitReleases"
)

// Lever is one change to the job and what it would do to the process's
// GPU memory.
type Lever struct {
	Lever        string `json:"lever"`
	Change       string `json:"change"`
	ProcessBytes int64  `json:"process_bytes"`
	SavedBytes   int64  `json:"saved_bytes"`
	Fits         bool   `json:"fits"`
	// Modules: what a trace's checkpoint lever checkpoints (model.layers.N).
	Modules []string `json:"modules,omitempty"`
	// Retraced: the figure is a second trace's with the change made (the
	// amp lever), not a what-if replay of the first.
	Retraced bool `json:"retraced,omitempty"`
}

// headroom: what the job has to spare under the budget, and under its
// own cap when it has one (a cap is on reserved: past it is an
// out-of-memory error however much of the GPU is free).
func headroom(r *Result, budget int64, c *AllocatorCap) int64 {
	h := budget - r.ProcessBytes
	if c != nil {
		h = min(h, c.Bytes-r.PeakReservedBytes)
	}
	return h
}

// Plan estimates o on md and fits it to a GPU with memory gpuBytes.
func Plan(md *models.Model, o Options, gpu GPU, margin float64) (*Result, *Fit, error) {
	return PlanWith(md, o, gpu, margin, PlanRequest{})
}

// PlanWith is Plan with what the plan search may change: the GPUs the
// user says exist, fine-tuning, whether to search when the job fits.
func PlanWith(md *models.Model, o Options, gpu GPU, margin float64, req PlanRequest) (*Result, *Fit, error) {
	if margin < 0 || margin >= 1 {
		return nil, nil, fmt.Errorf("--margin %.2f: want a fraction in [0, 1)", margin)
	}
	if gpu.ComputeCapability > 0 && o.ComputeCapability == 0 {
		o.ComputeCapability = gpu.ComputeCapability
	}
	budget := int64(float64(gpu.MemoryBytes) * (1 - margin))
	o.gpuBytes = gpu.MemoryBytes
	capped := allocatorCap(o.Alloc.Fraction, false, gpu, budget)
	if capped != nil {
		o.capBytes = capped.Bytes
	}
	o.AllocatorLimit = o.limitIn(budget)
	r, err := Estimate(md, o)
	if err != nil {
		return nil, nil, err
	}
	if r.OOM {
		// Past the point of failure the limited replay means little: show
		// what the job would need on a GPU without a limit.
		o.AllocatorLimit = 0
		if r, err = Estimate(md, o); err != nil {
			return nil, nil, err
		}
		r.OOM = true
	}
	f := &Fit{GPU: gpu.Name, GPUMemoryBytes: gpu.MemoryBytes, Margin: margin, BudgetBytes: budget, Cap: capped}
	f.Fits = fitsIn(r, f.BudgetBytes)
	f.OOMInMarginOnly = marginOnly(r, gpu, capped)
	if r.CacheReleases > 0 && !r.OOM {
		f.Notes = append(f.Notes, fmt.Sprintf("the caching allocator reaches the budget and frees its cache to go on "+
			"(%d times): reserved memory grows with the job (a generation's KV cache re-made by torch.cat each token) "+
			"until the GPU is full, then PyTorch releases the unused segments and retries", r.CacheReleases))
		f.NoteKinds = append(f.NoteKinds, Note{NoteCacheReleases, []int{r.CacheReleases}})
	}
	f.HeadroomBytes = headroom(r, f.BudgetBytes, f.Cap)
	f.MaxBatch = MaxBatch(md, r.Opts, f.BudgetBytes)
	f.MaxBatchAtLimit = f.MaxBatch == MaxBatchLimit
	if f.Fits && r.Opts.Batch > f.MaxBatch && !f.MaxBatchAtLimit {
		// An island: this batch fits, a smaller one does not. Fit, the
		// largest batch and the plan agree on the safe answer.
		f.Fits = false
		f.Notes = append(f.Notes, fmt.Sprintf("batch %d fits on its own, but batch %d does not: this close to the budget "+
			"the allocator's fragmentation decides, so it is counted as not fitting", r.Opts.Batch, f.MaxBatch+1))
		f.NoteKinds = append(f.NoteKinds, Note{NoteBatchIsland, []int{r.Opts.Batch, f.MaxBatch + 1}})
	}
	f.Levers = levers(md, r, f.BudgetBytes, req.GPUs)
	if !f.Fits || req.Always {
		if f.Plan, err = Search(md, r.Opts, f.BudgetBytes, req); err != nil {
			return nil, nil, err
		}
	}
	return r, f, nil
}

// allocatorLimit is what the caching allocator may reserve within a
// budget for the whole process: the CUDA context and libraries take theirs.
func allocatorLimit(budget int64) int64 {
	return max(1, budget-CUDAContextBytes-LibraryBytes)
}

// marginOnly: an out-of-memory replay (r, replayed again without a
// limit) that the whole GPU holds: no cap the job sets, and its process
// under the GPU's memory. Such a job is over the budget, but "CUDA out of
// memory" would say more than the replay knows.
func marginOnly(r *Result, gpu GPU, c *AllocatorCap) bool {
	return r.OOM && c == nil && r.ProcessBytes <= gpu.MemoryBytes
}

// fitsIn: the job ran within budget without an out-of-memory error.
func fitsIn(r *Result, budget int64) bool {
	return !r.OOM && r.ProcessBytes <= budget
}

type alt struct {
	lever, change string
	apply         func(*Options) bool // false: not applicable
}

// alternatives are the single levers; the multi-GPU ones only when the
// user said more than one GPU exists (gpus, or the job's own world size).
func alternatives(fam family, o Options, gpus int) []alt {
	gpus = max(gpus, o.WorldSize)
	alts := []alt{
		{"amp", "--precision amp-bf16 (autocast)", func(o *Options) bool {
			ok := o.Precision == "fp32"
			o.Precision = "amp-bf16"
			return ok
		}},
		{"bf16", "--precision bf16 (pure bf16 weights, grads and states)", func(o *Options) bool {
			ok := o.Precision != "bf16" && o.Precision != "fp16"
			o.Precision = "bf16"
			return ok
		}},
		{"checkpointing", "--checkpointing (recompute each block in backward)", func(o *Options) bool {
			ok := !o.Checkpointing && !o.Inference
			o.Checkpointing = true
			return ok
		}},
		{"fused-optimizer", "--optimizer-impl fused (no foreach temporaries)", func(o *Options) bool {
			ok := o.OptimizerImpl == "foreach" && (o.Optimizer == "adamw" || o.Optimizer == "adam")
			o.OptimizerImpl = "fused"
			return ok
		}},
		{"8bit-optimizer", "--optimizer adamw-8bit (bitsandbytes)", func(o *Options) bool {
			ok := o.Optimizer == "adamw" || o.Optimizer == "adam"
			o.Optimizer = "adamw-8bit"
			return ok
		}},
		{"ddp-bucket-view", "--ddp-bucket-view (DDP gradient_as_bucket_view=True: no second copy of the gradients)", func(o *Options) bool {
			ok := o.DDP && !o.DDPBucketView
			o.DDPBucketView = true
			return ok
		}},
		{"zero2", fmt.Sprintf("--zero 2 --world-size %d (DeepSpeed: shard optimizer states and gradients)", gpus), func(o *Options) bool {
			ok := o.ZeroStage < 2 && !o.Inference && gpus > 1
			o.ZeroStage, o.WorldSize, o.FSDP, o.DDP, o.DDPBucketView = 2, gpus, false, false, false
			return ok
		}},
		{"fsdp", fmt.Sprintf("--fsdp --world-size %d (shard parameters, gradients and states)", gpus), func(o *Options) bool {
			ok := o.ZeroStage < 3 && !o.Inference && gpus > 1
			o.ZeroStage, o.WorldSize, o.FSDP, o.DDP, o.DDPBucketView = 3, gpus, true, false, false
			return ok
		}},
		{"fsdp-mixed-precision", "--fsdp-param-dtype bf16 (FSDP's MixedPrecision / MixedPrecisionPolicy: gather and compute in bf16, fp32 shards)", func(o *Options) bool {
			ok := o.fsdpMixedPrecisionFits()
			o.FSDPParamDType = "bf16"
			return ok
		}},
		{"fsdp-offload", "--fsdp-offload (FSDP's CPU offload: shards, gradients and optimizer states in pinned host RAM, the step on the CPU; slower)", func(o *Options) bool {
			ok := o.fsdpOffloadFits()
			o.FSDPOffload = true
			return ok
		}},
		{expandableLever, expandableChange, func(o *Options) bool {
			ok := !o.Alloc.Expandable && !o.Alloc.AsyncBackend
			o.Alloc.Expandable = true
			return ok
		}},
		{noMaxSplitLever, noMaxSplitChange, func(o *Options) bool {
			ok := o.Alloc.MaxSplit > 0 && !o.Alloc.AsyncBackend
			o.Alloc.MaxSplit = 0
			return ok
		}},
		{"half-batch-accum", fmt.Sprintf("--batch %d --accum %d (same effective batch)", max(1, o.Batch/2), o.Accum*2), func(o *Options) bool {
			ok := o.Batch >= 2 && !o.Inference
			o.Batch, o.Accum = o.Batch/2, o.Accum*2
			return ok
		}},
	}
	if !fam.images() {
		alts = append(alts, alt{"shorter-sequence", fmt.Sprintf("--seq %d", max(1, o.Seq/2)), func(o *Options) bool {
			ok := o.Seq >= 2
			o.Seq /= 2
			return ok
		}})
		alts = append(alts, alt{"sdpa", "--attention sdpa (flash / memory-efficient kernels)", func(o *Options) bool {
			ok := o.Attention == "eager" && !fam.alwaysEager()
			o.Attention = "sdpa"
			return ok
		}})
	}
	return alts
}

// levers tries each alternative and ranks those that save memory.
func levers(md *models.Model, base *Result, budget int64, gpus int) []Lever {
	out := []Lever{} // [] rather than null in --json when nothing applies
	fam, err := familyOf(md)
	if err != nil {
		return out // Estimate refused md before: nothing to try
	}
	for _, a := range alternatives(fam, base.Opts, gpus) {
		o := base.Opts
		if !a.apply(&o) {
			continue
		}
		r, err := Estimate(md, o)
		if err != nil || r.ProcessBytes >= base.ProcessBytes {
			continue
		}
		out = append(out, Lever{Lever: a.lever, Change: a.change, ProcessBytes: r.ProcessBytes,
			SavedBytes: base.ProcessBytes - r.ProcessBytes, Fits: fitsIn(r, budget)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].SavedBytes > out[j].SavedBytes })
	return out
}
