package estimate

import (
	"fmt"
	"strings"

	"github.com/torchmem/torchmem/internal/estimate/models"
)

// castPEFT makes autocast's half copies of the fp32 GEMM weights of a
// block (-1: outside the blocks): the adapters, the layers
// prepare_model_for_kbit_training upcast (lm_head), modules_to_save
// copies. A half or quantized weight needs none.
func (e *ctx) castPEFT(block int, ps []models.Param) {
	for _, p := range ps {
		if !p.Matmul {
			continue
		}
		k := keyOf(p)
		// A frozen fp32 weight (an upcast lm_head, a base loaded in fp32)
		// is not cached: autocast caches only leaves that require grad,
		// so frozenLinear casts it for each call.
		for _, t := range e.pq.byParam[k] {
			if t.matmul && t.dt == 4 {
				e.castCopy(block, t.elems)
			}
		}
	}
}

func (e *ctx) castCopy(block int, elems int64) {
	c := e.m.new(elems, 2, CatAutocast)
	e.m.save(c)
	e.casts[block+1] = append(e.casts[block+1], c)
}

// adapterGrads makes the gradients of the trainable tensors of ps (and,
// for a quantized block, the dequantized weight its backward needs).
func (e *ctx) adapterGrads(ps []models.Param, micro int) {
	var full []*tensor
	for _, p := range ps {
		for _, t := range e.pq.byParam[keyOf(p)] {
			sh := e.shard(t.elems, 2)
			if micro > 1 || sh != t.elems {
				full = append(full, e.m.new(t.elems, t.dt, CatGrads))
			}
			if micro == 1 && !e.o.DDPBucketView {
				e.grads = append(e.grads, e.m.new(sh, t.dt, CatGrads))
			}
		}
	}
	e.m.drop(full...)
	if len(ps) > 0 {
		e.pq.gradBlock = ps[0].Block
		e.quantBackwardTemp(ps[0].Block)
	}
}

// frozenInput: block 0's backward makes no gradient for its input when
// the embeddings are frozen, unless reentrant checkpointing needed them
// to require grad (PEFT's enable_input_require_grads).
func (e *ctx) frozenInput() bool {
	if e.pq == nil || !e.pq.peft || e.pq.gradBlock != 0 {
		return false
	}
	if e.o.Checkpointing && !e.o.PEFT.NonReentrant {
		return false
	}
	for _, p := range e.stemParams {
		if len(e.pq.byParam[keyOf(p)]) > 0 {
			return false // a trained embedding needs the gradient
		}
	}
	for _, p := range e.headParams {
		if len(e.pq.byParam[keyOf(p)]) > 0 && embeddingName(p.Name) {
			return false
		}
	}
	return true
}

// bnbPagedMinElems: bitsandbytes' paged optimizers page a state only when
// its tensor has this many elements or more (get_state_buffer: "> 1 MB");
// a smaller one is torch.zeros_like in the caching allocator. LoRA's A and
// B of rank 8 or 16 on a 4096-wide model (32,768 and 65,536 elements) stay
// in the allocator; up/down projections' B (11,008 × 16) are paged.
const bnbPagedMinElems = 100_000

// adapterOptimizerStep is the optimizer over the trainable tensors only.
// Paged optimizers (bitsandbytes paged_adamw*) keep their large states in
// CUDA managed memory, outside PyTorch's allocator: they count in
// nvidia-smi, not in max_memory_allocated.
func (e *ctx) adapterOptimizerStep(step int) {
	m := e.m
	m.phase = fmt.Sprintf("optimizer step %d", step)
	opt := strings.TrimPrefix(e.o.Optimizer, "paged-")
	paged := opt != e.o.Optimizer
	if !e.pq.madeState {
		m.phase += " (states created)"
		for _, t := range e.pq.trainList {
			sh := e.shard(t.elems, 1)
			n, dt := 0, t.dt
			switch opt {
			case "adamw", "adam":
				n = 2
			case "adamw-8bit":
				n, dt = 2, 1
				if t.elems < 4096 {
					dt = 4 // bitsandbytes keeps small tensors in 32-bit
				}
			case "sgd-momentum":
				n = 1
			}
			for k := 0; k < n; k++ {
				if paged && sh >= bnbPagedMinElems {
					e.pq.pagedByte += sh * dt
					continue
				}
				e.states = append(e.states, m.new(sh, dt, CatOptState))
			}
		}
		e.pq.madeState = true
	}
	if (opt == "adamw" || opt == "adam") && e.o.OptimizerImpl == "foreach" && !paged {
		var temps []*tensor
		for _, t := range e.pq.trainList {
			temps = append(temps, m.new(e.shard(t.elems, 1), t.dt, CatOptTemp))
		}
		m.drop(temps...)
	}
}

// gradParams are the tensors that get gradients (DDP's buckets).
func (e *ctx) gradParams() []models.Param {
	if e.pq == nil || !e.pq.peft {
		return e.params
	}
	var out []models.Param
	for _, t := range e.pq.trainList {
		out = append(out, models.Param{Elems: t.elems})
	}
	return out
}

// trainableCount is the number of parameters that train.
func (e *ctx) trainableCount() int64 {
	if e.pq == nil || !e.pq.peft {
		return e.md.ParamCount()
	}
	return e.pq.trainable
}

// peftResult adds the trainable count and the paged optimizer states.
func (e *ctx) peftResult(r *Result) {
	if !e.o.Inference {
		r.TrainableParams = e.trainableCount()
		if e.pq != nil && e.pq.peft && e.full != nil && e.full != e.md {
			// One tensor-parallel rank walks its share; PEFT prints the model's.
			r.TrainableParams = planPEFT(e.full, e.o).trainable
		}
		if (e.pq == nil || !e.pq.peft) && e.full != nil {
			r.TrainableParams = e.full.ParamCount()
		}
	}
	if e.pq == nil || e.pq.pagedByte == 0 {
		return
	}
	r.addOutside(Item{"paged_optimizer_states", e.pq.pagedByte})
}

// logitsDT is the element size of the output layer's result, whose
// gradient the loss's backward casts back to: the compute dtype, or half
// under autocast when prepare_model_for_kbit_training made the rest fp32
// (the fp32 lm_head's GEMM still runs in half).
func (e *ctx) logitsDT() int64 {
	if e.pq != nil && e.pq.peft && e.dt.autocast {
		return 2
	}
	return e.dt.compute
}
