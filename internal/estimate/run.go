package estimate

import (
	"fmt"
	"strings"
)

// inputData is the step's batch on the GPU: token ids (int64) or images.
func (e *ctx) inputData() *tensor {
	if e.fam.images() {
		s := int64(e.imageSize())
		return e.m.new(int64(e.o.Batch)*3*s*s, 4, CatData)
	}
	return e.m.new(e.tokens(), 8, CatData)
}

// train replays Steps optimizer steps of Accum micro-batches each.
func (e *ctx) train() {
	e.loadWeights()
	e.ddpReducer()
	for step := 1; step <= e.o.Steps; step++ {
		for micro := 1; micro <= e.o.Accum; micro++ {
			e.trainMicro(step, micro)
		}
		e.optimizerStep(step)
		e.m.phase = fmt.Sprintf("zero_grad, step %d", step)
		e.m.drop(e.grads...)
		e.grads = nil
	}
}

func (e *ctx) trainMicro(step, micro int) {
	m := e.m
	m.grad = true
	m.phase = fmt.Sprintf("forward, step %d", step)
	data := e.inputData()
	root := e.gatherRoot()
	e.forwardWorkspace()
	e.castWeights(-1, e.headParams)
	e.castWeights(-1, e.stemParams)
	e.rec = nil
	x := e.fam.embed(e, data)
	stem := e.rec
	x = e.forwardBlocks(x, m.phase)
	m.phase = fmt.Sprintf("end of forward (head and loss), step %d", step)
	e.head(x)
	for _, l := range e.casts { // autocast exits: the cache lets go
		m.drop(l...)
	}
	m.phase = fmt.Sprintf("start of backward (loss gradients), step %d", step)
	e.workspace()
	e.prefetched = e.prefetchBackward(len(e.blockParams) - 1)
	e.headBackward(micro)
	if e.o.Checkpointing {
		// The last block's output came from its no-grad pass and only the
		// head kept it; the block's recompute makes its own.
		m.unsave(x)
	}
	e.backwardBlocks(step, micro)
	e.tiedEmbeddingGrad()
	e.fam.stemBackward(e, micro)
	e.fsdpBackwardDone()
	m.drop(root...)
	m.unsave(stem...)
	m.drop(stem...)
	e.releaseBridge()
	m.unsave(e.casts[0]...)
	e.casts[0] = nil
	m.unsave(data) // a ViT's patch convolution saved the images
	m.drop(e.dx, data)
	e.dx = nil
	e.releaseReduceBucket()
}

// tiedEmbeddingGrad: a weight shared by the input embedding and the output
// layer already has its .grad from the head; the embedding's backward makes
// a second full-size gradient that AccumulateGrad adds in place.
func (e *ctx) tiedEmbeddingGrad() {
	for _, p := range e.headParams {
		if strings.Contains(p.Name, "embed") || strings.HasPrefix(p.Name, "wte") || strings.HasPrefix(p.Name, "shared") {
			e.m.drop(e.m.new(p.Elems, e.dt.unshardedGrad, CatGrads))
		}
	}
}

// optimizerStep creates the states on the first step (torch initialises
// them lazily inside step()) and allocates the update's temporaries.
func (e *ctx) optimizerStep(step int) {
	if e.pq != nil && e.pq.peft {
		e.adapterOptimizerStep(step)
		return
	}
	m := e.m
	m.phase = fmt.Sprintf("optimizer step %d", step)
	if e.o.FSDPOffload {
		return // on the host: the states, the update's temporaries
	}
	if e.states == nil {
		m.phase += " (states created)"
	}
	n, stateDT := e.stateLayout()
	if e.states == nil {
		for _, p := range e.params {
			sh := e.shard(p.Elems, 1)
			if e.deepSpeed() && e.dt.param == 2 { // fp32 master weights
				e.states = append(e.states, m.new(sh, 4, CatOptState))
			}
			for k := 0; k < n; k++ {
				dt := stateDT
				if e.o.Optimizer == "adamw-8bit" && p.Elems < 4096 {
					dt = 4 // bitsandbytes keeps small tensors in 32-bit
				}
				e.states = append(e.states, m.new(sh, dt, CatOptState))
			}
			if e.o.Optimizer == "adafactor" && p.Elems > 1 {
				e.states = append(e.states, m.new(max(1, p.Elems/1024), 4, CatOptState))
			}
		}
	}
	fp32Grads := e.fp32GradPartition()
	var temps []*tensor
	switch {
	case (e.o.Optimizer == "adamw" || e.o.Optimizer == "adam") && e.o.OptimizerImpl == "foreach":
		// _multi_tensor_adam: exp_avg_sq_sqrt = _foreach_sqrt(exp_avg_sqs),
		// one temporary list the size of the parameters.
		for _, p := range e.params {
			temps = append(temps, m.new(e.shard(p.Elems, 1), stateDT, CatOptTemp))
		}
	case e.o.Optimizer == "adafactor":
		// Adafactor updates one parameter at a time with fp32 work tensors.
		for _, p := range e.params {
			a, b := m.new(p.Elems, 4, CatOptTemp), m.new(p.Elems, 4, CatOptTemp)
			m.drop(a, b)
		}
	}
	m.drop(temps...)
	m.drop(fp32Grads)
}

// fp32GradPartition: DeepSpeed steps its fp32 master weights with an fp32
// copy of the rank's half-precision gradient partition, one flat tensor
// alive through the update (stage_1_and_2's step, stage3's
// _prepare_fp32_grad_for_sub_group: 3.14 GiB for a 7B model over 8 GPUs in
// traces of DeepSpeed 0.19). nil otherwise.
func (e *ctx) fp32GradPartition() *tensor {
	if !e.deepSpeed() || e.dt.param != 2 {
		return nil
	}
	var n int64
	for _, p := range e.params {
		n += e.shard(p.Elems, 1)
	}
	return e.m.new(n, 4, CatGrads)
}

// hostOffloadBytes: what FSDP's CPU offload keeps in this rank's host RAM,
// pinned (CPUOffloadPolicy's default, FSDP1's too): the shards, their
// gradients (the parameters' dtype) and the optimizer's states.
func (e *ctx) hostOffloadBytes() int64 {
	if !e.o.FSDPOffload {
		return 0
	}
	n, stateDT := e.stateLayout()
	var b int64
	for _, p := range e.params {
		b += e.shard(p.Elems, 3) * (e.dt.param + e.dt.grad + int64(n)*stateDT)
	}
	return b
}

// deepSpeed: ZeRO as DeepSpeed runs it (not FSDP).
func (e *ctx) deepSpeed() bool { return e.o.ZeroStage > 0 && !e.o.FSDP }

// stateLayout is the number of per-parameter states and their dtype size.
func (e *ctx) stateLayout() (int, int64) {
	dt := e.dt.state
	if e.deepSpeed() && dt == 2 {
		dt = 4 // DeepSpeed keeps optimizer states in fp32 next to the master weights
	}
	switch e.o.Optimizer {
	case "adamw", "adam":
		return 2, dt
	case "adamw-8bit":
		return 2, 1
	case "sgd-momentum":
		return 1, dt
	}
	return 0, dt
}

// infer replays forward passes under no_grad: a scoring forward over the
// whole sequence, or generation (prefill, then one token at a time with the
// KV cache growing by torch.cat).
func (e *ctx) infer() {
	e.loadWeights()
	for step := 1; step <= 2; step++ {
		e.m.grad = false
		e.bridge = nil
		e.m.phase = fmt.Sprintf("forward, pass %d", step)
		data := e.inputData()
		e.forwardWorkspace()
		e.castWeights(-1, e.headParams)
		e.castWeights(-1, e.stemParams)
		x := e.forwardBlocks(e.fam.embed(e, data), e.m.phase)
		e.m.phase = fmt.Sprintf("logits, pass %d", step)
		logits := e.inferHead(x)
		for _, l := range e.casts {
			e.m.unsave(l...)
			e.m.drop(l...)
		}
		if e.o.GenLen > 0 {
			e.m.drop(logits)
			logits = e.decode(step)
		}
		e.m.drop(logits, data)
		e.m.unsave(e.kv...)
		e.kv = nil
	}
}

// inferHead: generate() asks the model for the last position's logits only
// (logits_to_keep=1) and copies them to fp32.
func (e *ctx) inferHead(x *tensor) *tensor {
	if e.o.GenLen == 0 || e.fam.images() {
		return e.head(x)
	}
	b, V := int64(e.o.Batch), int64(e.md.Vocab)
	e.m.drop(x)
	e.exitStack(true)
	l := e.m.new(b*V, e.dt.compute, CatLoss)
	f := e.m.new(b*V, 4, CatLoss)
	e.m.drop(l)
	return f
}

// decode replays generate()'s loop after the prefill: every new token runs
// one forward in which each layer's DynamicCache keys and values are
// re-made one position longer by torch.cat while the old tensor is still
// alive, then freed. The caching allocator rarely fits a tensor into the
// slightly smaller block just freed, so long generations fragment the
// reserved memory; replaying every step is what shows it. Each step also
// takes the last position's logits and copies them to fp32. The cache ends
// one short of prompt + generated tokens: the last token is never fed back.
func (e *ctx) decode(step int) *tensor {
	e.m.phase = fmt.Sprintf("generation, pass %d", step)
	b, V := int64(e.o.Batch), int64(e.md.Vocab)
	var f *tensor
	for n := int64(e.o.Seq) + 1; n < int64(e.o.Seq+e.o.GenLen); n++ {
		for i, t := range e.kv {
			nt := e.m.new(t.elems/(n-1)*n, t.dt, CatKVCache)
			nt.saved, nt.live = true, false // held by the cache object only
			e.m.unsave(t)
			e.m.drop(t)
			e.kv[i] = nt
		}
		l := e.m.new(b*V, e.dt.compute, CatLoss)
		e.m.drop(f)
		f = e.m.new(b*V, 4, CatLoss)
		e.m.drop(l)
	}
	if f == nil { // one new token: the prefill made it
		f = e.m.new(b*V, 4, CatLoss)
	}
	return f
}
