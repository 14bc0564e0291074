package estimate

import "github.com/torchmem/torchmem/internal/estimate/models"

// granite is GraniteForCausalLM as transformers runs it
// (src/transformers/models/granite/modeling_granite.py; the multipliers'
// defaults, 1.0, in configuration_granite.py): a Llama block, embedding
// and head, with four scalar multipliers. Each is a Python float, so the
// op saves nothing for backward (MulBackward0/DivBackward0 with a scalar
// keep only the scalar); what it costs is the new tensor it makes, while
// its input is still alive:
//
//	GraniteModel.forward        inputs_embeds = inputs_embeds * self.embedding_multiplier
//	GraniteDecoderLayer.forward hidden_states = residual + hidden_states * self.residual_multiplier
//	                            (after the attention and after the MLP: the product is a
//	                            temporary the residual add reads)
//	GraniteForCausalLM.forward  logits = self.lm_head(hidden_states)
//	                            logits = logits / self.config.logits_scaling
//	                            (in the logits' dtype; the lm_head output dies once the
//	                            quotient exists, and the quotient is what the loss reads)
//
// attention_multiplier replaces 1/sqrt(head_dim) as the attention's scale
// (eager: matmul(q, k^T) * scaling, the same one new tensor as Llama's
// division; sdpa and flash attention take it as their scale argument),
// so the attention is Llama's. In backward the division makes one more
// logits-sized gradient (grad / logits_scaling) before lm_head's backward
// (headBackward, logitsScale).
type granite struct{ llama }

func init() { registerFamily(models.Granite, granite{}) }

func (granite) embed(e *ctx, data *tensor) *tensor {
	return graniteScaled(e, llama{}.embed(e, data))
}

func (granite) block(e *ctx, _ int, x *tensor) *tensor {
	T := e.tokens()
	x2 := graniteResidual(e, llamaAttentionProj(e, x), x)
	x2.live = true // the MLP's residual add reads it again
	n2 := e.rmsNorm(x2, T)
	return graniteResidual(e, e.gatedMLP(n2, T, int64(e.md.Intermediate), false), x2)
}

// graniteResidual is `hidden_states = residual + hidden_states *
// self.residual_multiplier`: the product is a temporary the add reads, and
// out (the sublayer's output, still bound to hidden_states) dies only when
// the name is rebound to the sum.
func graniteResidual(e *ctx, out, residual *tensor) *tensor {
	scaled := e.act(out.elems, out.dt)
	sum := e.add(scaled, residual)
	e.m.drop(out)
	return sum
}

// head: the final RMSNorm, lm_head, the division by logits_scaling, then
// Llama's loss on the quotient. A sequence classifier is Llama's head.
func (granite) head(e *ctx, x *tensor) *tensor {
	if e.md.SeqClassification {
		return llama{}.head(e, x)
	}
	e.exitStack(false)
	logits := e.lmLogits(e.rmsNormOf(x, e.tokens()))
	e.logitsScale = true // headBackward: DivBackward0's gradient
	return e.lmLoss(graniteScaled(e, logits))
}

// graniteScaled is `t = t * m` (or `/ m`) for a Python float m: a new
// tensor of t's size and dtype, nothing saved; the old t dies once the
// name is rebound to it.
func graniteScaled(e *ctx, t *tensor) *tensor {
	out := e.act(t.elems, t.dt)
	e.m.drop(t)
	return out
}
