package estimate

import "github.com/torchmem/torchmem/internal/estimate/models"

// Forward recipes of the transformer blocks, following the Hugging Face
// modeling code (transformers 5) and torchvision's VisionTransformer.

func (e *ctx) gpt2Block(x *tensor) *tensor {
	T, h := e.tokens(), int64(e.md.Hidden)
	ln1 := e.layerNorm(x, T)
	qkv := e.linear(ln1, 3*T*h)
	e.m.drop(ln1)
	// q, k, v are views of the c_attn output: SDPA saves that one tensor.
	att := e.attention(attn{q: qkv, heads: int64(e.md.Heads), kvHeads: int64(e.md.Heads),
		dHead: int64(e.md.HeadDim), qLen: int64(e.seq()), kLen: int64(e.seq()), dropout: e.md.AttentionDropout})
	e.kvKeep(T*h, qkv.dt) // keys
	e.kvKeep(T*h, qkv.dt) // values
	e.m.drop(qkv)
	proj := e.linear(att, T*h)
	e.m.drop(att)
	x2 := e.add(e.dropout(proj, e.md.HiddenDropout), x)
	ln2 := e.layerNorm(x2, T)
	fc := e.linear(ln2, T*int64(e.md.Intermediate))
	e.m.drop(ln2)
	y := e.activation(fc, e.md.Activation)
	p2 := e.linear(y, T*h)
	e.m.drop(y)
	x2.live = true // still the residual
	return e.add(e.dropout(p2, e.md.HiddenDropout), x2)
}

func (e *ctx) llamaBlock(x *tensor) *tensor {
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
	x2 := e.add(p, x)
	x2.live = true
	n2 := e.rmsNorm(x2, T)
	I := T * int64(md.Intermediate)
	g := e.linear(n2, I)
	sg := e.activation(g, md.Activation)
	u := e.linear(n2, I)
	e.m.drop(n2)
	prod := e.act(I, e.dt.compute) // act(gate) * up saves both factors
	e.m.save(sg, u)
	e.m.drop(sg, u)
	dn := e.linear(prod, T*h)
	e.m.drop(prod)
	return e.add(dn, x2)
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

func (e *ctx) bertBlock(x *tensor) *tensor {
	md := e.md
	T, h := e.tokens(), int64(md.Hidden)
	q, k, v := e.linear(x, T*h), e.linear(x, T*h), e.linear(x, T*h)
	o := e.attention(attn{q: q, k: k, v: v, heads: int64(md.Heads), kvHeads: int64(md.Heads), dHead: int64(md.HeadDim),
		qLen: int64(e.seq()), kLen: int64(e.seq()), dropout: md.AttentionDropout})
	e.m.drop(q, k, v)
	p := e.linear(o, T*h)
	e.m.drop(o)
	a1 := e.layerNormOf(e.add(e.dropout(p, md.HiddenDropout), x), T)
	i1 := e.linear(a1, T*int64(md.Intermediate))
	g := e.activation(i1, md.Activation)
	o2 := e.linear(g, T*h)
	e.m.drop(g)
	a1.live = true
	return e.layerNormOf(e.add(e.dropout(o2, md.HiddenDropout), a1), T)
}

// rmsNormOf normalises x and lets go of it.
func (e *ctx) rmsNormOf(x *tensor, rows int64) *tensor {
	out := e.rmsNorm(x, rows)
	e.m.drop(x)
	return out
}

// hfViTBlock is transformers' ViTLayer: pre-LN, separate q/k/v linears
// over the LayerNorm output, SDPA, dense + residual, then the MLP.
func (e *ctx) hfViTBlock(x *tensor) *tensor {
	md := e.md
	T, h := e.tokens(), int64(md.Hidden)
	ln1 := e.layerNorm(x, T)
	q, k, v := e.linear(ln1, T*h), e.linear(ln1, T*h), e.linear(ln1, T*h)
	e.m.drop(ln1)
	o := e.attention(attn{q: q, k: k, v: v, heads: int64(md.Heads), kvHeads: int64(md.Heads), dHead: int64(md.HeadDim),
		qLen: int64(e.seq()), kLen: int64(e.seq()), dropout: md.AttentionDropout})
	e.m.drop(q, k, v)
	p := e.linear(o, T*h)
	e.m.drop(o)
	x2 := e.add(e.dropout(p, md.HiddenDropout), x)
	ln2 := e.layerNorm(x2, T)
	g := e.activation(e.linear(ln2, T*int64(md.Intermediate)), "gelu")
	e.m.drop(ln2)
	f2 := e.linear(g, T*h)
	e.m.drop(g)
	return e.add(e.dropout(f2, md.HiddenDropout), x2)
}

// layerNormOf normalises x and lets go of it (post-LN blocks).
func (e *ctx) layerNormOf(x *tensor, rows int64) *tensor {
	out := e.layerNorm(x, rows)
	e.m.drop(x)
	return out
}

// vitBlock is torchvision's EncoderBlock: nn.MultiheadAttention in training
// mode takes the slow path (F.multi_head_attention_forward): the packed
// in-projection runs on a transposed view (matmul copies it to fold the
// batch), its output is made contiguous per q/k/v, and the SDPA output is
// permuted and copied before out_proj.
func (e *ctx) vitBlock(x *tensor) *tensor {
	md := e.md
	T, h := e.tokens(), int64(md.Hidden)
	ln1 := e.layerNorm(x, T)
	var folded *tensor
	if e.dt.autocast {
		c := e.act(T*h, 2)
		folded = e.act(T*h, 2)
		e.m.drop(c)
	} else {
		folded = e.act(T*h, ln1.dt)
	}
	e.m.save(folded)
	e.m.drop(ln1)
	proj := e.act(3*T*h, e.dt.compute)
	e.m.drop(folded)
	qkv := e.act(3*T*h, e.dt.compute)
	e.m.drop(proj)
	o := e.attention(attn{q: qkv, heads: int64(md.Heads), kvHeads: int64(md.Heads), dHead: int64(md.HeadDim),
		qLen: int64(e.seq()), kLen: int64(e.seq()), dropout: md.AttentionDropout})
	e.m.drop(qkv)
	oc := e.act(o.elems, o.dt)
	e.m.drop(o)
	p := e.linear(oc, T*h)
	e.m.drop(oc)
	x2 := e.add(p, x)
	x2.live = true
	ln2 := e.layerNorm(x2, T)
	f1 := e.linear(ln2, T*int64(md.Intermediate))
	e.m.drop(ln2)
	g := e.activation(f1, "gelu")
	f2 := e.linear(g, T*h)
	e.m.drop(g)
	return e.add(f2, x2)
}

// t5Block is a T5 encoder layer, or a decoder layer (self-attention,
// cross-attention over the encoder output, feed-forward) when enc != nil.
// T5 attention is eager: scores plus a relative position bias, softmax in
// fp32, dropout.
func (e *ctx) t5Block(x, enc *tensor) *tensor {
	md := e.md
	T, h, inner := e.tokens(), int64(md.Hidden), int64(md.Heads*md.HeadDim)
	s := int64(e.seq())
	self := func(x *tensor, kv *tensor) *tensor {
		n := e.rmsNorm(x, T)
		src := n
		if kv != nil {
			src = kv
		}
		q, k, v := e.linear(n, T*inner), e.linear(src, T*inner), e.linear(src, T*inner)
		e.m.drop(n)
		saved := e.o.Attention
		e.o.Attention = "eager"
		o := e.attention(attn{q: q, k: k, v: v, heads: int64(md.Heads), kvHeads: int64(md.Heads), dHead: int64(md.HeadDim),
			qLen: s, kLen: s, dropout: md.AttentionDropout, fp32Softmax: true})
		e.o.Attention = saved
		e.m.drop(q, k, v)
		p := e.linear(o, T*h)
		e.m.drop(o)
		x.live = true
		return e.add(e.dropout(p, md.HiddenDropout), x)
	}
	x = self(x, nil)
	if enc != nil {
		x = self(x, enc)
	}
	n := e.rmsNorm(x, T)
	I := T * int64(md.Intermediate)
	var hdn *tensor
	if md.Gated {
		g := e.activation(e.linear(n, I), md.Activation)
		u := e.linear(n, I)
		hdn = e.act(I, e.dt.compute)
		e.m.save(g, u)
		e.m.drop(g, u)
	} else {
		hdn = e.activation(e.linear(n, I), md.Activation)
	}
	e.m.drop(n)
	hdn = e.dropout(hdn, md.HiddenDropout)
	wo := e.linear(hdn, T*h)
	e.m.drop(hdn)
	x.live = true
	return e.add(e.dropout(wo, md.HiddenDropout), x)
}

func (e *ctx) transformerBlock(i int, x *tensor) *tensor {
	switch e.md.Family {
	case models.GPT2:
		return e.gpt2Block(x)
	case models.Llama:
		return e.llamaBlock(x)
	case models.BERT:
		return e.bertBlock(x)
	case models.ViT:
		if e.md.ModelType == "vit" { // a Hugging Face config, not torchvision
			return e.hfViTBlock(x)
		}
		return e.vitBlock(x)
	case models.T5:
		if i < e.md.Layers {
			return e.t5Block(x, nil)
		}
		return e.t5Block(x, e.encOut)
	}
	return x
}
