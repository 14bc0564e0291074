// Package estimate predicts the peak GPU memory of a PyTorch training or
// inference job before it runs. It walks the model op by op the way the
// Hugging Face and torchvision code runs it, allocating what each op
// allocates and keeping what autograd saves, replays those allocations
// through a model of PyTorch's caching allocator, and adds the CUDA context
// that nvidia-smi shows on top.
package estimate

import (
	"fmt"

	"github.com/torchmem/torchmem/internal/estimate/models"
)

// The process-level memory outside PyTorch's allocator, as NVML reported it
// on an H200 with torch 2.11 / CUDA 13 (lazy module loading): the CUDA
// context right after initialisation, and what cuBLAS/cuBLASLt handles and
// lazily loaded kernels add once a training step has run (NVML's figure
// minus reserved minus the context, 136–168 MiB over the measured jobs).
const (
	CUDAContextBytes = 641728512
	LibraryBytes     = 150 << 20
)

// Item is one line of the breakdown at the peak.
type Item struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
}

// Result is the estimate for one configuration.
type Result struct {
	Model  string `json:"model"`
	Family string `json:"family"`
	Params int64  `json:"params"`
	// ActiveParams: a mixture-of-experts model's parameters one token
	// uses (models.Model.ActiveParamCount); absent for a dense model.
	ActiveParams int64 `json:"active_params,omitempty"`
	// TrainableParams is what PEFT's print_trainable_parameters() calls
	// trainable: every parameter in full training, the adapters (and
	// modules_to_save copies) with --peft, 0 in inference.
	TrainableParams int64   `json:"trainable_params"`
	Opts            Options `json:"options"`
	// PeakAllocatedBytes is what torch.cuda.max_memory_allocated() would report.
	PeakAllocatedBytes int64 `json:"peak_allocated_bytes"`
	// PeakReservedBytes is torch.cuda.max_memory_reserved(): allocator segments.
	PeakReservedBytes int64 `json:"peak_reserved_bytes"`
	// ProcessBytes is what nvidia-smi would show for the process.
	ProcessBytes     int64 `json:"process_bytes"`
	CUDAContextBytes int64 `json:"cuda_context_bytes"`
	LibraryBytes     int64 `json:"library_bytes"`
	// PeakPhase says when the peak happens ("start of backward (loss
	// gradients), step 2", "optimizer step 1 (states created)").
	PeakPhase string `json:"peak_phase"`
	// Breakdown: live bytes by kind at the peak, then what sits above them.
	Breakdown []Item `json:"breakdown"`
	// ActivationBytesPerBlock is what one transformer block (or ResNet
	// block 0) keeps for backward, 0 in inference or with checkpointing.
	ActivationBytesPerBlock int64 `json:"activation_bytes_per_block"`
	// CacheReleases counts the times the allocator, at the GPU's limit,
	// freed its cached segments to go on (a long generation's growing KV
	// cache does this); OOM is true when even that was not enough.
	CacheReleases int  `json:"allocator_cache_releases"`
	OOM           bool `json:"oom"`
	// AllocConf: the options of PYTORCH_CUDA_ALLOC_CONF the allocator
	// model followed ("" for PyTorch's defaults).
	AllocConf string `json:"alloc_conf,omitempty"`
	// GCIdle: why the job's garbage_collection_threshold does nothing
	// (allocconf's GCNoFraction...; "" when it acts or is not set).
	// Collections: the times it gave cached memory back.
	GCIdle      string `json:"gc_threshold_idle,omitempty"`
	Collections int    `json:"gc_collections,omitempty"`
	// CachedFreeBytes is the reserved memory no tensor uses at the end of
	// the job: what torch.cuda.empty_cache() would give back.
	CachedFreeBytes int64 `json:"cached_free_bytes_at_end"`
	// HostOffloadBytes: with --fsdp-offload, the pinned host RAM one GPU's
	// rank holds: its fp32 shards, their gradients and the optimizer's
	// states (every GPU of a node holds as much).
	HostOffloadBytes int64 `json:"host_offload_bytes,omitempty"`
	// loaded is torch.cuda.memory_allocated() after the model load, what
	// a calibration row records as model_state_bytes.
	loaded int64
}

// Estimate predicts the memory of running md with o.
func Estimate(md *models.Model, o Options) (*Result, error) {
	e, err := walk(md, o)
	if err != nil {
		return nil, err
	}
	return e.result(), nil
}

// walk checks the options against the model and replays the job in a
// fresh process.
func walk(md *models.Model, o Options) (*ctx, error) { return walkIn(md, o, nil) }

// walkIn replays the job in process p, or a fresh one when p is nil.
func walkIn(md *models.Model, o Options, p *process) (*ctx, error) {
	if err := o.Defaults(); err != nil {
		return nil, err
	}
	if err := md.Validate(); err != nil {
		return nil, err
	}
	fam, err := familyOf(md)
	if err != nil {
		return nil, err
	}
	if err := checkPEFTModel(md, o); err != nil {
		return nil, err
	}
	if o, err = fam.options(md, o); err != nil {
		return nil, err
	}
	if (o.KVCache || o.GenLen > 0) && !fam.generates() {
		return nil, fmt.Errorf("--kv-cache/--gen-len: generation is modelled for decoder-only language models, not %s", md.Family)
	}
	if o.GenLen > 0 {
		o.KVCache = true
	}
	if err := checkSize(fam, md, o); err != nil {
		return nil, err
	}
	full := md
	if md, err = fam.tensorParallel(md, o.TP); err != nil {
		return nil, err
	}
	e := newCtx(fam, md, o)
	e.full = full
	p.enter(e)
	if o.Inference {
		e.infer()
	} else {
		e.train()
	}
	return e, nil
}

func (e *ctx) result() *Result {
	m := e.m
	r := &Result{Model: e.md.Name, Family: string(e.md.Family), Params: e.full.ParamCount(), Opts: e.o,
		PeakAllocatedBytes: m.peak, PeakReservedBytes: m.alloc.peak,
		CacheReleases: m.alloc.releases, OOM: m.alloc.oom, CachedFreeBytes: m.alloc.cachedFree(),
		CUDAContextBytes: CUDAContextBytes, LibraryBytes: LibraryBytes, PeakPhase: m.peakPhase,
		ActivationBytesPerBlock: e.perBlock, loaded: e.loaded, HostOffloadBytes: e.hostOffloadBytes(),
		AllocConf: e.o.Alloc.String(), GCIdle: e.o.Alloc.GCIdle(), Collections: m.alloc.collections}
	if e.o.Checkpointing {
		r.ActivationBytesPerBlock = 0
	}
	if e.full.MoE != nil {
		r.ActiveParams = e.full.ActiveParamCount()
	}
	r.fillProcess(m)
	if w := max(e.o.WorldSize, e.o.TP); w > 1 {
		r.addOutside(ncclItem(w)) // every rank of a multi-GPU job holds a communicator
	}
	e.peftResult(r)
	return r
}

// fillProcess sets what nvidia-smi would show and the breakdown at the
// peak from the machine's categories, the allocator's slack, the CUDA
// context and libraries: the same for the walk and a replayed trace.
func (r *Result) fillProcess(m *machine) {
	r.ProcessBytes = r.PeakReservedBytes + r.CUDAContextBytes + r.LibraryBytes
	for c := Category(0); c < numCats; c++ {
		if m.peakCats[c] != 0 {
			r.Breakdown = append(r.Breakdown, Item{c.String(), m.peakCats[c]})
		}
	}
	r.Breakdown = append(r.Breakdown,
		Item{"allocator_cache_and_fragmentation", r.PeakReservedBytes - r.PeakAllocatedBytes},
		Item{"cuda_context", r.CUDAContextBytes},
		Item{"cuda_libraries", r.LibraryBytes})
}

// addOutside adds GPU memory the caching allocator does not hold (paged
// optimizer states in CUDA managed memory): in the process's figure, not
// in allocated or reserved, and in the breakdown beside the CUDA context.
func (r *Result) addOutside(it Item) {
	r.ProcessBytes += it.Bytes
	at := len(r.Breakdown)
	for i, b := range r.Breakdown {
		if b.Name == "cuda_context" {
			at = i
		}
	}
	r.Breakdown = append(r.Breakdown[:at], append([]Item{it}, r.Breakdown[at:]...)...)
}

// checkSize refuses configurations whose largest tensor would not fit in
// an int64 byte count (no GPU holds an exabyte).
func checkSize(fam family, md *models.Model, o Options) error {
	big := fam.largestTensor(md, o)
	if big*8 > 1<<56 {
		return fmt.Errorf("batch %d with this sequence or image size needs a tensor of %.3g elements: too large to estimate", o.Batch, big)
	}
	return nil
}
