package estimate

import "github.com/torchmem/torchmem/internal/estimate/models"

// bert is Hugging Face's BERT and RoBERTa: learned absolute positions and
// token types, post-LN encoder blocks, a masked-LM head (dense, activation,
// LayerNorm, decoder) or the pooler of a sequence classifier.
type bert struct{ familyDefaults }

func init() { registerFamily(models.BERT, bert{}) }

func (bert) loraTargets() []string { return []string{"query", "value"} }

func (bert) options(md *models.Model, o Options) (Options, error) { return textOptions(md, o, true) }

func (bert) embed(e *ctx, _ *tensor) *tensor {
	T, h, p, s := e.tokens(), int64(e.md.Hidden), e.dt.work, int64(e.seq())
	x := e.act(T*h, p) // word embeddings
	if e.md.TypeVocab > 0 {
		x = e.add(x, e.act(T*h, p)) // + token types
	}
	x = e.layerNormOf(e.add(x, e.act(s*h, p)), T) // + positions
	return e.dropout(x, e.md.EmbedDropout)
}

func (bert) block(e *ctx, _ int, x *tensor) *tensor {
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

// head: the masked-LM head's transform (dense, activation, LayerNorm)
// before the decoder, or the pooler: dense + tanh (which saves its output)
// on the first token, whose GEMM reads a view of the last hidden states.
func (bert) head(e *ctx, x *tensor) *tensor {
	e.exitStack(false)
	T, h := e.tokens(), int64(e.md.Hidden)
	if e.md.SeqClassification {
		b := int64(e.o.Batch)
		e.m.save(x)
		e.m.drop(x)
		feat := e.act(b*h, e.dt.compute)
		e.m.save(feat) // tanh
		return e.seqClassifierHead(feat, b)
	}
	d := e.linear(x, T*h)
	e.m.drop(x)
	return e.lmHead(e.layerNormOf(e.activation(d, e.md.Activation), T))
}
