package estimate

import (
	"fmt"

	"github.com/torchmem/torchmem/internal/estimate/models"
)

// Tensor parallelism as Megatron-LM lays it out (and transformers'
// tp_plan / torch DTensor do for Llama-style models): q/k/v and the MLP's
// gate/up projections are split by output columns, o_proj and down_proj by
// input rows, the embedding and the output layer by vocabulary. Each of
// the TP ranks holds 1/TP of the heads (key/value heads too, or one when
// there are fewer than TP of them), of the MLP's width and of the
// vocabulary; norms are replicated. A rank is therefore walked as the
// model with those widths divided (tpModel): its weights, gradients,
// optimizer states, the activations inside attention and the MLP, the
// KV cache and the logits are its own.
//
// The residual stream between the parallel regions (norm inputs and
// outputs, residual adds, dropout masks: Korthikanti et al.'s 10sbh of
// the 34sbh a layer keeps) is replicated on every rank; with sequence
// parallelism it is split by the sequence (1/TP of the tokens), which is
// what seqShard does to every activation of the residual width. The
// all-gather and reduce-scatter buffers are transient and not modelled.
//
// ZeRO/FSDP and DDP run over the data-parallel group: WorldSize/TP ranks.

// checkParallel checks --tp, --sequence-parallel and --expert-capacity and
// makes the world at least one TP group.
func (o *Options) checkParallel() error {
	switch {
	case o.TP < 0 || o.TP > 1024:
		return fmt.Errorf("--tp %d out of range (1..1024)", o.TP)
	case o.SequenceParallel && o.TP < 2:
		return fmt.Errorf("--sequence-parallel needs --tp 2 or more")
	case o.ExpertCapacity < 0 || o.ExpertCapacity > 64:
		return fmt.Errorf("--expert-capacity %g: want a factor in (0, 64], or 0 for dropless experts", o.ExpertCapacity)
	}
	if o.TP > 1 {
		if o.WorldSize <= 1 {
			o.WorldSize = o.TP
		}
		if o.WorldSize%o.TP != 0 {
			return fmt.Errorf("--world-size %d is not a multiple of --tp %d (data-parallel groups of whole TP groups)", o.WorldSize, o.TP)
		}
	}
	return nil
}

// dataParallel is the number of ranks ZeRO/FSDP/DDP shard or replicate over.
func (o Options) dataParallel() int {
	return max(1, o.WorldSize/max(1, o.TP))
}

// tpModel is one TP rank's share of md: heads, key/value heads, the MLP's
// and the experts' widths and the vocabulary divided by tp.
func tpModel(md *models.Model, tp int) (*models.Model, error) {
	if tp <= 1 {
		return md, nil
	}
	if md.Heads%tp != 0 {
		return nil, fmt.Errorf("--tp %d does not divide the %d attention heads of %s", tp, md.Heads, md.Name)
	}
	if md.KVHeads%tp != 0 && tp%md.KVHeads != 0 {
		return nil, fmt.Errorf("--tp %d and the %d key/value heads of %s: one must divide the other", tp, md.KVHeads, md.Name)
	}
	r := *md
	r.Heads /= tp
	r.KVHeads = max(1, md.KVHeads/tp)
	r.Intermediate = ceilDiv(md.Intermediate, tp)
	r.Vocab = ceilDiv(md.Vocab, tp)
	if md.MoE != nil {
		s := *md.MoE
		s.ExpertIntermediate = ceilDiv(s.ExpertIntermediate, tp)
		s.SharedIntermediate = ceilDiv(s.SharedIntermediate, tp)
		r.MoE = &s
	}
	if md.HeaderParams > 0 {
		// A safetensors header's count, scaled as the shapes are.
		whole, rank := *md, r
		whole.HeaderParams, rank.HeaderParams = 0, 0
		r.HeaderParams = 0
		if n := whole.ParamCount(); n > 0 {
			r.HeaderParams = int64(float64(md.HeaderParams) * float64(rank.ParamCount()) / float64(n))
		}
	}
	return &r, nil
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// seqShard: with sequence parallelism an activation of the residual
// stream's width (tokens x hidden) holds 1/TP of the tokens on a rank.
func (e *ctx) seqShard(elems int64) int64 {
	if !e.o.SequenceParallel || e.o.TP < 2 || elems != e.tokens()*int64(e.md.Hidden) {
		return elems
	}
	return (elems + int64(e.o.TP) - 1) / int64(e.o.TP)
}
