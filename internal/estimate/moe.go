package estimate

import (
	"math"

	"github.com/torchmem/torchmem/internal/estimate/models"
)

// moe is a mixture-of-experts decoder as transformers runs it (Mixtral,
// Qwen2-MoE, DeepSeek-MoE, DeepSeek-V2): a Llama block whose MLP is, in
// the sparse layers, a router and an eager loop over the experts.
//
// Routing (MixtralSparseMoeBlock, Qwen2MoeSparseMoeBlock, DeepseekMoE):
// router_logits = gate(x) (T x E); softmax in fp32 (saves its output);
// topk -> weights and int64 indices (T x k); one_hot(indices).permute ->
// the expert mask (E x k x T int64), alive during the loop. For each
// expert: torch.where on its mask row, then the tokens routed to it are
// gathered (x[top_x], the permutation buffer, saved by gate_proj and
// up_proj), run through its gated MLP, scaled by their routing weight
// (the product saves both), and index_add_-ed into the output (T x h). Over
// all experts the gathered rows add up to T*k tokens: activations as a
// dense gated MLP k times as many tokens wide plus the gathered inputs and
// scaled outputs. Shared experts (DeepSeek, Qwen) are a dense gated MLP
// every token runs; Qwen scales it by sigmoid(shared_expert_gate(x)).
//
// Expert capacity: transformers is dropless (each expert takes what the
// router sends it). Capacity-based implementations (GShard/Switch style,
// DeepSpeed-MoE, Megatron with a capacity factor) pad every expert to
// ceil(factor * T*k / E) rows; --expert-capacity F models that: the
// gathered buffers and the experts' activations are E * capacity rows.
// The router's auxiliary load-balancing loss (output_router_logits) is
// off in the configs and not modelled.
type moe struct{ llama }

func init() { registerFamily(models.MoE, moe{}) }

func (moe) block(e *ctx, i int, x *tensor) *tensor {
	var x2 *tensor
	if e.md.MoE.MLA != nil {
		x2 = mlaAttention(e, x)
	} else {
		x2 = llamaAttention(e, x)
	}
	T := e.tokens()
	n2 := e.rmsNorm(x2, T)
	var out *tensor
	if e.md.MoE.Sparse(i) {
		out = e.sparseMLP(n2, T)
	} else {
		out = e.gatedMLP(n2, T, int64(e.md.Intermediate), false)
	}
	return e.add(out, x2)
}

// expertRows is how many token rows each expert processes: the T*k routed
// rows spread evenly (dropless: the rows add up to T*k whatever the
// balance), or the capacity each expert is padded to.
func (e *ctx) expertRows(T int64) []int64 {
	s := e.md.MoE
	E, k := int64(s.Experts), int64(s.TopK)
	rows := make([]int64, E)
	if f := e.o.ExpertCapacity; f > 0 {
		c := int64(math.Ceil(f * float64(T*k) / float64(E)))
		for j := range rows {
			rows[j] = c
		}
		return rows
	}
	for j := range rows {
		rows[j] = T * k / E
		if int64(j) < T*k%E {
			rows[j]++
		}
	}
	return rows
}

// sparseMLP is the router, the routed experts and the shared experts on
// n (consumed); it returns the layer's MLP output (T x h).
func (e *ctx) sparseMLP(n *tensor, T int64) *tensor {
	s, h := e.md.MoE, int64(e.md.Hidden)
	E, k := int64(s.Experts), int64(s.TopK)
	logits := e.linear(n, T*E)
	probs := e.act(T*E, 4) // softmax(router_logits, dtype=float)
	e.m.save(probs)
	e.m.drop(logits)
	w := e.act(T*k, 4)   // topk values
	idx := e.act(T*k, 8) // topk indices, saved by topk's backward
	e.m.save(idx)
	e.m.drop(probs)
	wh := w // routing_weights.to(hidden_states.dtype): a copy unless fp32 already
	if n.dt != w.dt {
		wh = e.act(T*k, n.dt)
		e.m.drop(w)
	}
	final := e.act(T*h, n.dt) // zeros, filled by index_add_
	mask := e.act(T*k*E, 8)   // one_hot(...).permute(2, 1, 0)
	for _, r := range e.expertRows(T) {
		if r == 0 {
			continue
		}
		where := e.act(2*r, 8) // idx, top_x
		x := e.act(r*h, n.dt)  // hidden_states[top_x]: the permutation buffer
		e.m.save(where)
		y := e.gatedMLP(x, r, int64(s.ExpertIntermediate), false)
		rw := e.act(r, wh.dt) // routing_weights[top_x, idx, None]
		scaled := e.act(r*h, promote(y.dt, rw.dt))
		// index_add_'s backward formula reads its source (source.dim(),
		// expand_as(source)), so autograd keeps the scaled rows as well.
		e.m.save(y, rw, scaled)
		e.m.drop(y, rw, scaled, where) // index_add_ into final, in place
	}
	e.m.drop(mask, wh)
	if s.SharedIntermediate > 0 {
		sh := e.gatedMLP(n, T, int64(s.SharedIntermediate), s.SharedGate)
		if s.SharedGate { // F.sigmoid(shared_expert_gate(x)) * shared_expert(x)
			g := e.linear(n, T)
			e.m.drop(n)
			sg := e.act(T, g.dt)
			e.m.save(sg, sh)
			e.m.drop(g)
			prod := e.act(T*h, e.dt.compute)
			e.m.drop(sg, sh)
			sh = prod
		}
		return e.add(final, sh)
	}
	e.m.drop(n)
	return final
}

// mlaAttention is DeepseekV2Attention: q (through q_a/q_b when
// q_lora_rank is set), the joint compressed key/value and shared rotary
// key (kv_a_proj_with_mqa), its RMSNorm, kv_b_proj's per-head keys and
// values, rotary embeddings on the rope parts, q and k concatenated back
// to nope+rope per head, attention, o_proj, residual.
func mlaAttention(e *ctx, x *tensor) *tensor {
	md := e.md
	a := md.MoE.MLA
	T, h, H := e.tokens(), int64(md.Hidden), int64(md.Heads)
	qk, nope, rope, vd := int64(a.QKNope+a.QKRope), int64(a.QKNope), int64(a.QKRope), int64(a.VHeadDim)
	n1 := e.rmsNorm(x, T)
	var q *tensor
	if a.QLoraRank > 0 {
		qa := e.linear(n1, T*int64(a.QLoraRank))
		q = e.linear(e.rmsNormOf(qa, T), T*H*qk)
	} else {
		q = e.linear(n1, T*H*qk)
	}
	ckv := e.linear(n1, T*(int64(a.KVLoraRank)+rope))
	e.m.drop(n1)
	kv := e.linear(e.rmsNorm(ckv, T), T*H*(nope+vd))
	qr := e.rope(e.act(T*H*rope, q.dt)) // q_pe, contiguous for rotary
	kr := e.rope(e.act(T*rope, ckv.dt)) // k_pe, shared by the heads
	e.m.drop(ckv)
	qs := e.act(T*H*qk, promote(q.dt, qr.dt)) // cat(q_nope, q_pe)
	ks := e.act(T*H*qk, promote(kv.dt, kr.dt))
	vs := e.act(T*H*vd, kv.dt) // value_states, contiguous
	e.m.drop(q, qr, kr, kv)
	o := e.attention(attn{q: qs, k: ks, v: vs, heads: H, kvHeads: H, dHead: vd,
		qLen: int64(e.seq()), kLen: int64(e.seq()), dropout: md.AttentionDropout, fp32Softmax: true})
	e.kvKeep(ks.elems, ks.dt)
	e.kvKeep(vs.elems, vs.dt)
	e.m.drop(qs, ks, vs)
	p := e.linear(o, T*h)
	e.m.drop(o)
	x2 := e.add(p, x)
	x2.live = true
	return x2
}

// largestTensor: the router's one-hot mask (T*k*E) can outgrow the logits.
func (f moe) largestTensor(md *models.Model, o Options) float64 {
	big := f.familyDefaults.largestTensor(md, o)
	s := md.MoE
	return max(big, float64(o.Batch)*float64(o.Seq)*float64(s.TopK*s.Experts))
}
