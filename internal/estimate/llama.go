package estimate

import "github.com/torchmem/torchmem/internal/estimate/models"

// llama is the Llama architecture as transformers runs it (llama, mistral,
// qwen2/3, gemma, olmo): RMSNorm, rotary embeddings, a gated (SwiGLU) MLP,
// grouped-query attention.
type llama struct{ familyDefaults }

func (llama) lossLayout(v version, set bool) lossLayout { return causalLossLayout(v, set) }

func init() { registerFamily(models.Llama, llama{}) }

func (llama) generates() bool { return true }

func (llama) loraTargets() []string { return []string{"q_proj", "v_proj"} }

func (llama) tensorParallel(md *models.Model, tp int) (*models.Model, error) { return tpModel(md, tp) }

func (llama) embed(e *ctx, _ *tensor) *tensor {
	e.causalMask()
	return e.act(e.tokens()*int64(e.md.Hidden), e.dt.work)
}

func (llama) block(e *ctx, _ int, x *tensor) *tensor {
	x2 := llamaAttention(e, x)
	n2 := e.rmsNorm(x2, e.tokens())
	return e.add(e.gatedMLP(n2, e.tokens(), int64(e.md.Intermediate), false), x2)
}

// llamaAttention is the attention half of a Llama-style block: its
// RMSNorm, q/k/v (grouped-query), rotary embeddings, attention, o_proj
// and the residual add, whose result it returns (kept live: the MLP's
// residual adds it again).
func llamaAttention(e *ctx, x *tensor) *tensor {
	x2 := e.add(llamaAttentionProj(e, x), x)
	x2.live = true
	return x2
}

// llamaAttentionProj is llamaAttention up to o_proj, whose output it
// returns; x, the residual, stays alive for the caller's add.
func llamaAttentionProj(e *ctx, x *tensor) *tensor {
	md := e.md
	T, h, d := e.tokens(), int64(md.Hidden), int64(md.HeadDim)
	n1 := e.rmsNorm(x, T)
	q := e.linear(n1, T*int64(md.Heads)*d)
	k := e.linear(n1, T*int64(md.KVHeads)*d)
	v := e.linear(n1, T*int64(md.KVHeads)*d)
	e.m.drop(n1)
	if md.QKNorm { // qwen3: RMSNorm over each head of q and k
		q, k = e.rmsNormOf(q, T*int64(md.Heads)), e.rmsNormOf(k, T*int64(md.KVHeads))
	}
	qe, ke := e.rope(q), e.rope(k)
	// transformers passes enable_gqa to SDPA (torch >= 2.5, no mask):
	// k and v stay at kv-head width; eager attention repeats them.
	o := e.attention(attn{q: qe, k: ke, v: v, heads: int64(md.Heads), kvHeads: int64(md.KVHeads), dHead: d,
		qLen: int64(e.seq()), kLen: int64(e.seq()), dropout: md.AttentionDropout, fp32Softmax: true})
	e.kvKeep(ke.elems, ke.dt)
	e.kvKeep(v.elems, v.dt)
	e.m.drop(qe, ke, v)
	p := e.linear(o, T*h)
	e.m.drop(o)
	return p
}

// gatedMLP is down(act(gate(n)) * up(n)) over rows tokens of n, inter
// wide; unless keep, it lets go of n once up has read it. It returns the
// down projection.
func (e *ctx) gatedMLP(n *tensor, rows, inter int64, keep bool) *tensor {
	I := rows * inter
	g := e.linear(n, I)
	sg := e.activation(g, e.md.Activation)
	u := e.linear(n, I)
	if !keep {
		e.m.drop(n)
	}
	prod := e.act(I, e.dt.compute) // act(gate) * up saves both factors
	e.m.save(sg, u)
	// MulBackward0 makes both factors' gradients in one call while the
	// product's gradient is still alive: when the walk reaches u (the
	// last factor saved) and counts its gradient, the product's and the
	// other factor's exist too.
	u.bwdGrads = 2 * I * min(max(u.dt, e.dt.compute), 4)
	e.m.drop(sg, u)
	dn := e.linear(prod, rows*int64(e.md.Hidden))
	e.m.drop(prod)
	return dn
}

// rope applies rotary embeddings: q*cos + rotate_half(q)*sin. cos and sin
// have the dtype of the hidden states (fp32 under autocast), so the result
// is promoted; the muls save only cos and sin (they do not require grad).
func (e *ctx) rope(q *tensor) *tensor {
	c := promote(q.dt, e.dt.resid)
	a := e.act(q.elems, c)
	half := e.act(q.elems/2, q.dt)
	rot := e.act(q.elems, q.dt)
	e.m.drop(half)
	b := e.act(q.elems, c)
	e.m.drop(rot)
	out := e.act(q.elems, c)
	e.m.drop(a, b, q)
	return out
}

// head: the final RMSNorm, then the LM head or the score layer.
func (llama) head(e *ctx, x *tensor) *tensor {
	e.exitStack(false)
	T := e.tokens()
	if e.md.SeqClassification {
		return e.seqClassifierHead(e.rmsNormOf(x, T), T)
	}
	return e.lmHead(e.rmsNormOf(x, T))
}
