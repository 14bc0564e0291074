package estimate

import (
	"fmt"

	"github.com/torchmem/torchmem/internal/estimate/models"
)

// ctx walks one model through the steps of a job on a machine.
type ctx struct {
	m  *machine
	md *models.Model
	// full is the whole model when md is one tensor-parallel rank's share.
	full *models.Model
	fam  family // what differs by model family
	o    Options
	dt   dtypes
	// seqLen is the tokens per sample, the family's answer for md and o.
	seqLen int

	params      []models.Param
	blockParams [][]models.Param
	headParams  []models.Param // block -1 GEMM weights: grads appear at the head's backward
	stemParams  []models.Param // other block -1 tensors: grads at the end of backward
	weightBytes int64          // per element, after sharding and precision

	rec     []*tensor   // tensors made by the block being walked
	blocks  [][]*tensor // per block, what its forward made (released by its backward)
	ckptIn  []*tensor   // per block input kept by activation checkpointing
	casts   [][]*tensor // per block autocast weight copies
	headRec []*tensor
	grads   []*tensor
	states  []*tensor
	kv      []*tensor
	bridge  []*tensor // made between stacks (a T5's final encoder norm): released with the stem
	encOut  *tensor
	posBias []*tensor
	dx      *tensor
	ws      *tensor
	// gradBucket is DeepSpeed's reduce bucket (reduceBucket); overlapBucket
	// its second one, stage 2's with overlap_comm.
	gradBucket, overlapBucket *tensor
	// ddpBuckets are DistributedDataParallel's flat all-reduce buckets.
	ddpBuckets []*tensor
	// prefetched: FSDP's next block in backward, all-gathered ahead
	prefetched []*tensor
	// FSDP's gradients on their way to the reduce-scatter: the last
	// unit's flat input (kept until the next unit's), the root's
	// unsharded gradients (until the end of the backward)
	reduceIn, rootGrads []*tensor
	res                 []*resBlock // ResNet: per block, what its forward left for backward
	stem                *unit
	poolIdx             *tensor
	fwdWS               *tensor
	perBlock            int64 // activation bytes block 0 keeps for backward
	// pq is what PEFT adapters and quantized weights change (peft.go,
	// quant.go); nil for a plain job.
	pq *peftState

	// loaded is torch.cuda.memory_allocated() once the model is loaded
	// (blocks as the allocator cut them, slack included).
	loaded int64

	// logitsScale: the head divided the logits by a Python float (Granite's
	// logits_scaling), whose backward makes one more logits-sized gradient.
	logitsScale bool
}

func (e *ctx) seq() int { return e.seqLen }

func (e *ctx) imageSize() int { return imageSizeOf(e.md, e.o) }

// imageSizeOf is the image side o asks for, or md's own.
func imageSizeOf(md *models.Model, o Options) int {
	if o.ImageSize > 0 {
		return o.ImageSize
	}
	return md.ImageSize
}

func (e *ctx) tokens() int64 { return int64(e.o.Batch) * int64(e.seq()) }

func newCtx(fam family, md *models.Model, o Options) *ctx {
	e := &ctx{m: &machine{cat: CatActivations, alloc: newAllocator(o.AllocatorLimit, o.Alloc, o.gpuBytes)}, md: md, full: md, fam: fam, o: o,
		dt: dtypesOf(o), seqLen: fam.seq(md, o)}
	e.params = md.Params()
	// A safetensors header's count replaces the shape-derived one: scale
	// every tensor so that weights, grads and states add up to it.
	if md.HeaderParams > 0 {
		var n int64
		for _, p := range e.params {
			n += p.Elems
		}
		if n > 0 && n != md.HeaderParams {
			scale := float64(md.HeaderParams) / float64(n)
			for i := range e.params {
				e.params[i].Elems = int64(float64(e.params[i].Elems) * scale)
			}
		}
	}
	e.blockParams = make([][]models.Param, md.BlockCount())
	for _, p := range e.params {
		switch {
		case p.Block >= 0 && p.Block < len(e.blockParams):
			e.blockParams[p.Block] = append(e.blockParams[p.Block], p)
		case p.Matmul && !fam.images(), classifierParam(p):
			e.headParams = append(e.headParams, p)
		default:
			e.stemParams = append(e.stemParams, p)
		}
	}
	e.blocks = make([][]*tensor, len(e.blockParams))
	e.res = make([]*resBlock, len(e.blockParams))
	e.ckptIn = make([]*tensor, len(e.blockParams))
	e.casts = make([][]*tensor, len(e.blockParams)+1)
	e.initPEFT()
	return e
}

// shard is the part of a tensor one rank holds under ZeRO/FSDP.
func (e *ctx) shard(elems int64, stage int) int64 {
	if dp := int64(e.o.dataParallel()); e.o.ZeroStage >= stage && dp > 1 {
		return (elems + dp - 1) / dp
	}
	return elems
}

// loadWeights puts the parameters on the GPU. With LoadFP32 a half-precision
// model arrives in fp32 and is converted there (model.cuda().bfloat16():
// Module._apply makes each new half tensor, then frees the fp32 one), which
// leaves the fp32 segments in the allocator's cache. The peak statistics
// then restart, as torch.cuda.reset_peak_memory_stats() would: the job's
// peak is that of its steps; the cache (reserved) carries over.
func (e *ctx) loadWeights() {
	e.m.phase = "model load"
	defer func() { e.loaded = e.m.total }()
	if e.pq != nil {
		e.loadPEFT()
		return
	}
	if e.o.FSDPOffload {
		return // the shards are made on the host (or moved there as FSDP wraps)
	}
	if e.dt.param != 4 && !e.o.NoLoadFP32 {
		var f32 []*tensor
		for _, p := range e.params {
			f32 = append(f32, e.m.new(e.shard(p.Elems, 3), 4, CatWeights))
		}
		for i, p := range e.params {
			e.m.new(e.shard(p.Elems, 3), e.dt.param, CatWeights)
			e.m.drop(f32[i])
		}
	} else {
		for _, p := range e.params {
			e.m.new(e.shard(p.Elems, 3), e.dt.param, CatWeights)
		}
	}
	e.m.peak, e.m.peakCats, e.m.peakPhase = e.m.total, e.m.cur, e.m.phase
}

// castWeights makes the autocast copies of a block's GEMM weights (block
// -1: the embedding/head ones), kept in the cache until autocast exits and
// saved by the GEMMs that use them.
func (e *ctx) castWeights(block int, ps []models.Param) {
	if !e.dt.autocast {
		return
	}
	if e.pq != nil {
		e.castPEFT(block, ps)
		return
	}
	if e.dt.work != 4 { // FSDP gathered them in half already: nothing to cast
		return
	}
	for _, p := range ps {
		if p.Matmul {
			c := e.m.new(p.Elems, 2, CatAutocast)
			e.m.save(c)
			e.casts[block+1] = append(e.casts[block+1], c)
		}
	}
}

// gather is FSDP / ZeRO-3 all-gathering a block's full parameters. With
// CPU offload (a world of one too) each shard is first copied in from the
// host (FSDP's all_gather_inputs: .to(device)), the copies freed once
// gathered.
func (e *ctx) gather(ps []models.Param) []*tensor {
	if e.o.ZeroStage < 3 || e.o.dataParallel() < 2 && !e.o.FSDPOffload {
		return nil
	}
	var in, out []*tensor
	if e.o.FSDPOffload {
		for _, p := range ps {
			in = append(in, e.m.new(e.shard(p.Elems, 3), e.dt.param, CatTemporaries))
		}
	}
	if e.o.FSDP {
		// FSDP2's all_gather_copy_in: one flat buffer of the unit, made on
		// its copy-in stream, copied out into the parameters and freed
		// (all_gather_input is a view of it)
		in = append(in, e.m.newOn(streamAllGather, sumElems(ps), e.dt.work, CatTemporaries))
	}
	for _, p := range ps {
		out = append(out, e.m.new(p.Elems, e.dt.work, CatWeights))
	}
	e.m.drop(in...)
	return out
}

// FSDP's own streams, numbered as the tracer numbers FSDP2's (its
// all-gather copy-in and reduce-scatter streams, high priority): what they
// allocate is cached for them alone (allocator.go's poolKey), as on a GPU.
const (
	streamAllGather     int32 = 33
	streamReduceScatter int32 = 35
)

// gatherRoot is FSDP's root unit all-gathered: what no wrapped block holds
// (the embeddings, the final norm, the head), unsharded at the root's
// pre-forward and, unlike a block, not resharded after the forward (FSDP1
// and FSDP2 both keep the root for the backward that follows at once)
// until the end of the backward. A Llama-3.2-1B's tied 128,256 x 2,048
// embedding is 1 GiB of fp32 held through the step on every rank.
// DeepSpeed's ZeRO-3 gathers them on use instead: not modelled.
func (e *ctx) gatherRoot() []*tensor {
	if !e.o.FSDP {
		return nil
	}
	return e.gather(append(append([]models.Param(nil), e.stemParams...), e.headParams...))
}

// prefetchBackward: FSDP (FSDP1's BACKWARD_PRE, FSDP2's default) all-gathers
// the block the backward reaches next while the current one runs: from
// the root's pre-backward (the loss's gradients) the last block is
// unsharded, and each block's backward runs with the one before it
// gathered too. DeepSpeed's ZeRO-3: nil, gathered on use.
func (e *ctx) prefetchBackward(block int) []*tensor {
	if !e.o.FSDP || block < 0 || block >= len(e.blockParams) {
		return nil
	}
	return e.gather(e.blockParams[block])
}

// kvKeep stores a layer's keys or values in the KV cache. transformers'
// DynamicLayer.update concatenates onto an empty tensor, so the cache holds
// copies (torch.cat), alive until the caller drops the cache.
func (e *ctx) kvKeep(elems, dt int64) {
	if !e.o.Inference || !e.o.KVCache {
		return
	}
	dt = e.kvDT(dt)
	c := e.m.new(elems, dt, CatKVCache)
	c.saved, c.live = true, false // held by the cache object only
	e.kv = append(e.kv, c)
}

// forwardBlocks runs every block, with activation checkpointing keeping
// only each block's input.
func (e *ctx) forwardBlocks(x *tensor, phase string) *tensor {
	for i := range e.blockParams {
		e.m.phase = fmt.Sprintf("%s, block %d of %d", phase, i+1, len(e.blockParams))
		e.rec = nil
		if d := e.fam.decoderStart(e.md); d > 0 && i == d {
			x = e.fam.enterDecoder(e, x)
		}
		e.bridge = append(e.bridge, e.rec...)
		g := e.gather(e.blockParams[i])
		e.enterBlock(i)
		before := e.m.cur[CatActivations]
		e.rec = nil
		if e.o.Checkpointing && e.m.grad {
			// Reentrant checkpointing (transformers' default) runs the block
			// under no_grad and saves its input; the weight casts sit in the
			// autocast cache only, until autocast exits.
			e.ckptIn[i] = x
			e.m.save(x)
			e.m.grad = false
			e.castWeights(i, e.blockParams[i])
			x = e.fam.block(e, i, x)
			e.m.grad = true
		} else {
			e.castWeights(i, e.blockParams[i])
			x = e.fam.block(e, i, x)
		}
		if i == 0 && e.perBlock == 0 && e.m.grad && !e.o.Checkpointing {
			e.perBlock = e.m.cur[CatActivations] - before - x.blk.size
		}
		e.blocks[i] = e.rec
		e.m.drop(g...)
	}
	e.enterBlock(-1)
	return x
}

// backwardBlocks releases each block's saved tensors in reverse, making
// its parameter gradients and the transient gradients of its activations.
func (e *ctx) backwardBlocks(step, micro int) {
	for i := len(e.blockParams) - 1; i >= 0; i-- {
		e.m.phase = fmt.Sprintf("backward, step %d, block %d of %d", step, i+1, len(e.blockParams))
		if i == e.fam.decoderStart(e.md)-1 {
			e.releaseBridge() // an encoder's final norm, between the stacks
		}
		g := e.prefetched
		if g == nil {
			g = e.gather(e.blockParams[i])
		}
		e.prefetched = nil
		if i > 0 {
			e.prefetched = e.prefetchBackward(i - 1)
		}
		if e.o.Checkpointing {
			e.castWeights(i, e.blockParams[i])
			e.rec = nil
			in := e.ckptIn[i]
			in.live = true
			e.enterBlock(i)
			y := e.fam.block(e, i, in)
			e.m.drop(y)
			e.blocks[i] = e.rec
		}
		e.fam.blockBackward(e, i, micro)
		e.releaseNodeInputs(false)
		e.m.unsave(e.casts[i+1]...)
		e.m.drop(e.casts[i+1]...)
		e.casts[i+1] = nil
		if e.ckptIn[i] != nil {
			e.m.unsave(e.ckptIn[i])
			e.ckptIn[i] = nil
		}
		e.m.drop(g...)
		e.blocks[i] = nil
	}
	e.releaseNodeInputs(true)
	e.exitStack(true)
}

// blockBackward walks the block's saved tensors in reverse creation order,
// as the autograd engine runs its ops: each op makes the gradient of its
// input (about the size of the tensor it saved) from the gradient of its
// output, which then goes, and releases what it saved. The gradient of the
// block's output stays alive to the end: the residual path brings it to
// the block's input. Parameter gradients appear with the block's GEMMs.
func (e *ctx) blockBackward(rec []*tensor, ps []models.Param, micro int) {
	prev := e.dx
	var g *tensor
	grads := false
	for i := len(rec) - 1; i >= 0; i-- {
		t := rec[i]
		if t.blk == nil || !t.saved {
			continue
		}
		if t.elems*t.dt >= 1<<20 {
			dt := min(max(t.dt, e.dt.compute), 4)
			ng := e.m.new(t.elems, dt, CatActivations)
			e.m.drop(g)
			g = ng
		}
		if t.bwdWorkspace > 0 {
			e.m.drop(e.m.new(t.bwdWorkspace, 1, CatWorkspace))
		}
		if t.bwdGrads > 0 {
			e.m.drop(e.m.new(t.bwdGrads, 1, CatActivations))
		}
		if !grads && i < len(rec)/2 {
			e.paramGrads(ps, micro)
			grads = true
		}
		e.m.unsave(t)
	}
	if !grads {
		e.paramGrads(ps, micro)
	}
	if prev != nil && !e.frozenInput() {
		e.dx = e.m.new(prev.elems, prev.dt, CatActivations)
	}
	e.m.drop(g, prev)
	e.m.unsave(rec...)
	e.m.drop(rec...)
}

// releaseBridge lets go of what the ops between two stacks saved.
func (e *ctx) releaseBridge() {
	e.m.unsave(e.bridge...)
	e.m.drop(e.bridge...)
	e.bridge = nil
}

// ddpReducer is DistributedDataParallel's constructor: the Reducer packs
// the parameters, in reverse order, into buckets (1 MiB for the first,
// bucket_cap_mb = 25 MiB after) and allocates one flat gradient tensor per
// bucket, kept for the model's life. Backward copies each .grad into its
// bucket for the all-reduce, so without gradient_as_bucket_view the
// gradients exist twice.
func (e *ctx) ddpReducer() {
	if !e.o.DDP {
		return
	}
	capBytes, fill := int64(1<<20), int64(0)
	flush := func() {
		if fill > 0 {
			e.ddpBuckets = append(e.ddpBuckets, e.m.new(fill/e.dt.grad, e.dt.grad, CatGrads))
			fill, capBytes = 0, 25<<20
		}
	}
	ps := e.gradParams()
	for i := len(ps) - 1; i >= 0; i-- {
		fill += ps[i].Elems * e.dt.grad
		if fill >= capBytes {
			flush()
		}
	}
	flush()
}

// paramGrads: the first micro-step allocates each .grad (set_to_none
// zero_grad left none); later micro-steps compute a fresh gradient and add
// it in place. ZeRO-2/3 keep only this rank's shard after reduce-scatter.
func (e *ctx) paramGrads(ps []models.Param, micro int) {
	if e.pq != nil && e.pq.peft {
		e.adapterGrads(ps, micro)
		return
	}
	var full []*tensor
	for _, p := range ps {
		sh := e.shard(p.Elems, 2)
		if micro > 1 || sh != p.Elems || e.o.FSDPOffload {
			full = append(full, e.m.new(p.Elems, e.dt.unshardedGrad, CatGrads))
		}
		if e.o.FSDPOffload {
			// CPU offload: the reduce-scatter's output is copied to the
			// host's gradient and goes
			e.m.drop(e.m.new(sh, e.dt.grad, CatGrads))
		} else if micro == 1 && !e.o.DDPBucketView { // bucket views: the grads are the buckets
			e.grads = append(e.grads, e.shardGrad(sh, sh != p.Elems))
		}
	}
	if e.o.FSDP && (e.o.dataParallel() > 1 || e.o.FSDPOffload) && len(full) > 0 {
		e.fsdpReduce(ps, full)
		return
	}
	e.m.drop(full...)
}

// shardGrad makes a gradient of elems: under FSDP, a sharded one is the
// reduce-scatter's output, made on its stream (FSDP2's foreach_reduce).
func (e *ctx) shardGrad(elems int64, sharded bool) *tensor {
	if e.o.FSDP && sharded {
		return e.m.newOn(streamReduceScatter, elems, e.dt.grad, CatGrads)
	}
	return e.m.new(elems, e.dt.grad, CatGrads)
}

// fsdpReduce: FSDP copies a unit's unsharded gradients into one flat
// reduce-scatter input in the reduce dtype and frees them; FSDP2 keeps
// that input until the next unit's reduce-scatter (which waits on it:
// FSDPParamGroup.post_backward's reduce_scatter_state). The root unit's
// gradients (the embeddings', the head's) stay unsharded until the root's
// post-backward at the end of the backward: a 128K-token head's gradient
// is 2 GiB of bf16 held through the whole backward.
func (e *ctx) fsdpReduce(ps []models.Param, full []*tensor) {
	if ps[0].Block < 0 {
		e.rootGrads = append(e.rootGrads, full...)
		return
	}
	e.m.drop(e.reduceIn...)
	e.reduceIn = []*tensor{e.m.newOn(streamReduceScatter, sumElems(ps), e.reduceDT(), CatGrads)}
	e.m.drop(full...)
}

// fsdpBackwardDone: the root's reduce-scatter at the end of the backward.
// As for a block, the root's post-backward first waits for the last
// block's reduce-scatter and lets its input go, then copies the root's
// gradients into an input of its own and frees them (FSDP2's
// post_backward and foreach_reduce); FSDP then waits for it too.
func (e *ctx) fsdpBackwardDone() {
	if len(e.rootGrads) == 0 && len(e.reduceIn) == 0 {
		return
	}
	var n int64
	for _, g := range e.rootGrads {
		n += g.elems
	}
	e.m.drop(e.reduceIn...)
	in := e.m.newOn(streamReduceScatter, n, e.reduceDT(), CatGrads)
	e.m.drop(e.rootGrads...)
	e.m.drop(in)
	e.rootGrads, e.reduceIn = nil, nil
}

// reduceDT: the gradients' dtype in the reduce-scatter. With FSDP's mixed
// precision, fp32: MixedPrecisionPolicy(param_dtype=bf16,
// reduce_dtype=float32) is torchtitan's recipe and PyTorch's FSDP2
// example's; otherwise the gradients' own.
func (e *ctx) reduceDT() int64 {
	if e.o.FSDPParamDType != "" {
		return 4
	}
	return e.dt.unshardedGrad
}

func sumElems(ps []models.Param) int64 {
	var n int64
	for _, p := range ps {
		n += p.Elems
	}
	return n
}

func (e *ctx) workspace() {
	e.reduceBucket()
	if e.ws != nil {
		return
	}
	// The autograd thread gets its own cuBLAS handle, hence a second workspace.
	e.ws = e.m.new(e.cublasWorkspaceBytes(), 1, CatWorkspace)
}

// reduceBucket is DeepSpeed's contiguous gradient bucket: reduce_bucket_size
// elements in the gradients' dtype, however small the model. Stage 3 makes
// it once and keeps it; stage 2 makes it for each backward (DeepSpeed up to
// 0.18.2 before the loss's gradients, 0.18.3 on at the first parameter's)
// and gives it back at the backward's end (releaseReduceBucket), as traces
// of DeepSpeed 0.19's own code have it.
func (e *ctx) reduceBucket() {
	if e.gradBucket == nil && e.deepSpeed() && e.o.ZeroStage >= 2 && e.o.dataParallel() > 1 {
		e.gradBucket = e.m.new(e.o.zeroBucket(), e.dt.grad, CatGrads)
		if e.o.ZeroOverlapComm && e.o.ZeroStage == 2 {
			// overlap_comm: a second bucket, so that one reduces while the
			// other fills (setup_buckets' double buffer)
			e.overlapBucket = e.m.new(e.o.zeroBucket(), e.dt.grad, CatGrads)
		}
	}
}

// releaseReduceBucket ends stage 2's bucket with the backward
// (_release_ipg_buffers): the optimizer step runs without it.
func (e *ctx) releaseReduceBucket() {
	if e.gradBucket != nil && e.o.ZeroStage == 2 {
		e.m.drop(e.gradBucket, e.overlapBucket)
		e.gradBucket, e.overlapBucket = nil, nil
	}
}

// forwardWorkspace is the main thread's cuBLAS workspace, made at the first
// GEMM and kept for the process's life.
func (e *ctx) forwardWorkspace() {
	if e.fwdWS == nil {
		e.fwdWS = e.m.new(e.cublasWorkspaceBytes(), 1, CatWorkspace)
	}
}

// cublasWorkspaceBytes: PyTorch takes cuBLAS workspaces from the caching
// allocator, one per handle and stream: 4096 KiB*8 on sm90+, else
// 4096 KiB*2 + 16 KiB*8 (the CUBLAS_WORKSPACE_CONFIG default).
func (e *ctx) cublasWorkspaceBytes() int64 {
	if e.o.ComputeCapability >= 90 {
		return 4096 * 8 * 1024
	}
	return 4096*1024*2 + 16*1024*8
}
