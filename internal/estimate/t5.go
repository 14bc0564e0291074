package estimate

import "github.com/torchmem/torchmem/internal/estimate/models"

// t5 is Hugging Face's T5 and mT5: an encoder stack (blocks 0..Layers-1)
// then a decoder stack, RMS LayerNorm, eager attention with a relative
// position bias, relu or gated-gelu MLP.
type t5 struct{ familyDefaults }

// No sequence-classification head is modelled for this family.
func (t5) classifierHead() bool { return false }

func init() { registerFamily(models.T5, t5{}) }

// largestTensor: T5's attention is always eager, so its scores count.
func (t5) largestTensor(md *models.Model, o Options) float64 {
	return attentionLargest(md, o, float64(o.Seq+o.GenLen), true)
}

func (t5) alwaysEager() bool { return true }

// lossDT: T5 calls CrossEntropyLoss on its logits as they are: fp32 under
// autocast (log_softmax is an fp32 op), half in pure half precision.
func (t5) lossDT(dt dtypes) int64 {
	if !dt.autocast {
		return dt.compute
	}
	return 4
}

func (t5) decoderStart(md *models.Model) int { return md.Layers }

// embed: the shared embedding, and the encoder's relative position bias
// (b, heads, s, s) in fp32, kept for the whole stack.
func (t5) embed(e *ctx, _ *tensor) *tensor {
	s := int64(e.seq())
	e.posBias = append(e.posBias, e.act(int64(e.o.Batch*e.md.Heads)*s*s, 4))
	return e.dropout(e.act(e.tokens()*int64(e.md.Hidden), e.dt.work), e.md.EmbedDropout)
}

func (t5) block(e *ctx, i int, x *tensor) *tensor {
	if i < e.md.Layers {
		return e.t5Block(x, nil)
	}
	return e.t5Block(x, e.encOut)
}

// enterDecoder: the encoder's final norm, then the decoder's embedding and
// its self-attention and cross-attention biases.
func (t5) enterDecoder(e *ctx, x *tensor) *tensor {
	T, h, s := e.tokens(), int64(e.md.Hidden), int64(e.seq())
	// The final norm saves the last encoder block's output: under
	// checkpointing that block's no-grad pass made it, so it is released
	// with the norm's backward, not with the block's.
	e.rec = append(e.rec, x)
	enc := e.dropout(e.rmsNorm(x, T), e.md.HiddenDropout)
	e.m.drop(x)
	e.encOut = enc
	if e.o.Checkpointing {
		e.m.save(enc) // an input of every checkpointed decoder block
	}
	e.m.drop(e.posBias...)
	e.posBias = nil
	for range 2 { // self-attention and cross-attention biases
		e.posBias = append(e.posBias, e.act(int64(e.o.Batch*e.md.Heads)*s*s, 4))
	}
	return e.dropout(e.act(T*h, e.dt.work), e.md.EmbedDropout)
}

// head: the decoder's final RMSNorm, then the LM head (or a score layer).
func (t5) head(e *ctx, x *tensor) *tensor {
	e.exitStack(false)
	T := e.tokens()
	if e.md.SeqClassification {
		return e.seqClassifierHead(e.rmsNormOf(x, T), T)
	}
	return e.lmHead(e.rmsNormOf(x, T))
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
