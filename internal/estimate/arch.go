package estimate

import "github.com/torchmem/torchmem/internal/estimate/models"

// Embeddings and heads of each family, and the dispatch to its blocks.

func (e *ctx) block(i int, x *tensor) *tensor {
	if e.md.Family == models.ResNet {
		return e.resnetBlock(i, x)
	}
	return e.transformerBlock(i, x)
}

// embed turns the step's input into the first block's input.
func (e *ctx) embed(data *tensor) *tensor {
	T, h, p := e.tokens(), int64(e.md.Hidden), e.dt.param
	s := int64(e.seq())
	if e.o.Attention == "eager" && (e.md.Family == models.GPT2 || e.md.Family == models.Llama) {
		// create_causal_mask materialises a (b, 1, s, s) float mask for
		// eager attention, in the hidden states' dtype, for the whole forward.
		e.posBias = append(e.posBias, e.act(int64(e.o.Batch)*s*s, e.dt.resid))
	}
	switch e.md.Family {
	case models.GPT2:
		x := e.add(e.act(T*h, p), e.act(s*h, p))
		return e.dropout(x, e.md.EmbedDropout)
	case models.Llama:
		return e.act(T*h, p)
	case models.BERT:
		x := e.act(T*h, p)
		if e.md.TypeVocab > 0 {
			x = e.add(x, e.act(T*h, p))
		}
		x = e.layerNormOf(e.add(x, e.act(s*h, p)), T)
		return e.dropout(x, e.md.EmbedDropout)
	case models.T5:
		e.posBias = append(e.posBias, e.act(int64(e.o.Batch*e.md.Heads)*s*s, 4))
		return e.dropout(e.act(T*h, p), e.md.EmbedDropout)
	case models.ViT:
		b, ps := int64(e.o.Batch), int64(e.imageSize()/e.md.PatchSize)
		conv := e.linear(data, b*h*ps*ps)
		x := e.act(T*h, promote(conv.dt, p)) // cat with the fp32 class token
		e.m.drop(conv)
		out := e.act(T*h, x.dt) // + pos_embedding (a parameter)
		e.m.drop(x)
		return out
	case models.ResNet:
		return e.resnetStem(data)
	}
	return data
}

// enterBlock switches a T5 from its encoder to its decoder.
func (e *ctx) enterBlock(i int, x *tensor) *tensor {
	if e.md.Family != models.T5 || i != e.md.Layers {
		return x
	}
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
	return e.dropout(e.act(T*h, e.dt.param), e.md.EmbedDropout)
}

// exitStack lets go of the per-stack tensors at the end of the forward.
// A T5 encoder output stays referenced until the end of backward (final):
// the cross-attention of each recomputed decoder block reads it again.
func (e *ctx) exitStack(final bool) {
	e.m.drop(e.posBias...)
	e.posBias = nil
	if e.encOut != nil {
		e.m.drop(e.encOut)
		if final {
			e.m.unsave(e.encOut)
			e.encOut = nil
		}
	}
}

// head runs the final norm, the output layer and (training) the loss. In
// inference the logits are returned live, as the caller holds them.
func (e *ctx) head(x *tensor) *tensor {
	e.rec = nil
	defer func() { e.headRec = e.rec; e.m.cat = CatActivations }()
	switch e.md.Family {
	case models.ViT, models.ResNet:
		return e.classifierHead(x)
	}
	e.exitStack(false)
	T, h, V := e.tokens(), int64(e.md.Hidden), int64(e.md.Vocab)
	if e.md.SeqClassification {
		return e.seqClassifierHead(x)
	}
	var n *tensor
	switch e.md.Family {
	case models.GPT2:
		n = e.layerNormOf(x, T)
	case models.BERT:
		d := e.linear(x, T*h)
		e.m.drop(x)
		n = e.layerNormOf(e.activation(d, e.md.Activation), T)
	default:
		n = e.rmsNorm(x, T)
		e.m.drop(x)
	}
	e.m.cat = CatLoss
	logits := e.linear(n, T*V)
	e.m.drop(n)
	if e.o.Inference {
		return logits
	}
	// ForCausalLMLoss: logits.float(), then cross_entropy = log_softmax
	// (saves its output) + nll_loss. The model output, and with it the
	// half-precision logits, is dropped once .loss is taken.
	ldt := e.lossDT()
	f := logits
	if logits.dt != ldt {
		f = e.act(T*V, ldt)
	}
	lsm := e.act(T*V, ldt)
	e.m.save(lsm)
	e.m.drop(f, logits, lsm)
	return nil
}

// seqClassifierHead: BERT pools the first token (dense + tanh, which saves
// its output) and classifies it; decoders score every position with the
// final-norm output and pick the last one. Logits and loss are tiny.
func (e *ctx) seqClassifierHead(x *tensor) *tensor {
	b, T, C := int64(e.o.Batch), e.tokens(), int64(e.md.Classes)
	var feat *tensor
	if e.md.Family == models.BERT {
		e.m.save(x) // the pooler's GEMM reads a view of the last hidden states
		e.m.drop(x)
		feat = e.act(b*int64(e.md.Hidden), e.dt.compute)
		e.m.save(feat) // tanh
	} else {
		if e.md.Family == models.GPT2 {
			feat = e.layerNormOf(x, T)
		} else {
			feat = e.rmsNorm(x, T)
			e.m.drop(x)
		}
		b = T
	}
	e.m.cat = CatLoss
	logits := e.linear(feat, b*C)
	e.m.drop(feat)
	if e.o.Inference {
		return logits
	}
	lsm := e.act(int64(e.o.Batch)*C, 4)
	e.m.save(lsm)
	e.m.drop(logits, lsm)
	return nil
}

func (e *ctx) classifierHead(x *tensor) *tensor {
	b, C := int64(e.o.Batch), int64(e.md.Classes)
	feat := x
	if e.md.Family == models.ViT {
		feat = e.layerNormOf(x, e.tokens()) // heads read its class-token row
	} else {
		e.m.save(x) // adaptive_avg_pool2d saves its input
		e.m.drop(x)
		feat = e.act(b*int64(x.elems/b)/int64(e.finalSpatial()), x.dt)
	}
	in := feat
	if e.dt.autocast && feat.dt == 4 {
		in = e.act(b*int64(e.featWidth()), 2)
	}
	e.m.save(in)
	logits := e.act(b*C, e.dt.compute)
	e.m.drop(in, feat)
	if e.o.Inference {
		return logits
	}
	lsm := e.act(b*C, 4)
	e.m.save(lsm)
	e.m.drop(logits, lsm)
	return nil
}

func (e *ctx) featWidth() int {
	if e.md.Family == models.ResNet {
		return 512 * e.md.Expansion()
	}
	return e.md.Hidden
}

// lossDT is the dtype of the language-model loss's tensors: fp32, from
// ForCausalLMLoss's logits.float() or from autocast running log_softmax in
// fp32; except a T5 trained in pure half precision, whose own
// CrossEntropyLoss call keeps the logits' dtype.
func (e *ctx) lossDT() int64 {
	if e.md.Family == models.T5 && !e.dt.autocast {
		return e.dt.compute
	}
	return 4
}

// headBackward: nll_loss's gradient and log_softmax's are both the size of
// the logits (fp32) while the saved log-probabilities are still held; a
// half-precision model then casts the gradient back.
func (e *ctx) headBackward(micro int) {
	T, V, ldt := e.tokens(), int64(e.md.Vocab), e.lossDT()
	if e.md.Family == models.ViT || e.md.Family == models.ResNet || e.md.SeqClassification {
		T, V, ldt = int64(e.o.Batch), int64(e.md.Classes), 4
	}
	g1 := e.m.new(T*V, ldt, CatLoss)
	g2 := e.m.new(T*V, ldt, CatLoss)
	e.m.drop(g1)
	var lossRec, rest []*tensor
	for _, t := range e.headRec {
		if t.cat == CatLoss && t.dt == ldt {
			lossRec = append(lossRec, t)
		} else {
			rest = append(rest, t)
		}
	}
	e.m.unsave(lossRec...)
	gl := g2
	if e.dt.compute != ldt {
		gl = e.m.new(T*V, e.dt.compute, CatLoss)
		e.m.drop(g2)
	}
	e.dx = e.m.new(e.blockInputElems(), e.dt.compute, CatActivations)
	e.paramGrads(e.headParams, micro)
	e.m.drop(gl)
	e.m.unsave(rest...)
	e.m.unsave(e.casts[0]...) // the head's weight copies are not needed any more
	e.headRec = nil
}

func (e *ctx) blockInputElems() int64 {
	if e.md.Family == models.ResNet {
		f := int64(e.finalSpatial())
		return int64(e.o.Batch) * int64(e.featWidth()) * f
	}
	return e.tokens() * int64(e.md.Hidden)
}
