package estimate

// The heads the families share: a language-model head with its loss, a
// sequence classifier, an image classifier, and their backward. A family's
// head recipe picks one and gives it the features (after its final norm).

// head runs the family's head on the last block's output x. In inference
// the logits are returned live, as the caller holds them.
func (e *ctx) head(x *tensor) *tensor {
	e.rec = nil
	defer func() { e.headRec = e.rec; e.m.cat = CatActivations }()
	return e.fam.head(e, x)
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

// lmHead is the output layer over the vocabulary on n, the final norm's
// output, and (training) the loss.
func (e *ctx) lmHead(n *tensor) *tensor { return e.lmLoss(e.lmLogits(n)) }

// lmLogits is the output layer over the vocabulary on n, which it frees.
func (e *ctx) lmLogits(n *tensor) *tensor {
	T, V := e.tokens(), int64(e.md.Vocab)
	e.m.cat = CatLoss
	logits := e.linear(n, T*V)
	e.m.drop(n)
	return logits
}

// lmLoss is the language-model loss on logits (T x vocabulary, in the
// dtype the output layer made them); in inference it returns the logits.
func (e *ctx) lmLoss(logits *tensor) *tensor {
	T, V := e.tokens(), int64(e.md.Vocab)
	if e.o.Inference {
		return logits
	}
	// ForCausalLMLoss: logits.float(), then cross_entropy = log_softmax
	// (saves its output) + nll_loss. The model output, and with it the
	// half-precision logits, is dropped once .loss is taken.
	ldt := e.fam.lossDT(e.dt)
	if l := e.lossLayout(); l != lossAsIs {
		e.lmLossShift(logits, l, ldt)
		return nil
	}
	f := logits
	if logits.dt != ldt {
		f = e.act(T*V, ldt)
	}
	lsm := e.act(T*V, ldt)
	e.m.save(lsm)
	e.m.drop(f, logits, lsm)
	return nil
}

// seqClassifierHead classifies rows of feat: BERT's pooled first token
// (rows = batch), or, for decoders, every position's final-norm output, of
// which the last one is picked. Logits and loss are tiny.
func (e *ctx) seqClassifierHead(feat *tensor, rows int64) *tensor {
	C := int64(e.md.Classes)
	e.m.cat = CatLoss
	logits := e.linear(feat, rows*C)
	e.m.drop(feat)
	if e.o.Inference {
		return logits
	}
	lsm := e.act(int64(e.o.Batch)*C, 4)
	e.m.save(lsm)
	e.m.drop(logits, lsm)
	return nil
}

// classifierHead is an image classifier's output layer on feat, width
// features per image, and (training) its loss.
func (e *ctx) classifierHead(feat *tensor, width int) *tensor {
	b, C := int64(e.o.Batch), int64(e.md.Classes)
	in := feat
	if e.dt.autocast && feat.dt == 4 {
		in = e.act(b*int64(width), 2)
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

// headBackward: nll_loss's gradient and log_softmax's are both the size of
// the logits (fp32) while the saved log-probabilities are still held; a
// half-precision model then casts the gradient back.
func (e *ctx) headBackward(micro int) {
	T, V, ldt := e.tokens(), int64(e.md.Vocab), e.fam.lossDT(e.dt)
	if e.fam.images() || e.md.SeqClassification {
		T, V, ldt = int64(e.o.Batch), int64(e.md.Classes), 4
	}
	l := e.lossLayout()
	var lossRec, rest []*tensor
	for _, t := range e.headRec {
		if t.cat == CatLoss && (l == lossAsIs && t.dt == ldt || l != lossAsIs && t.saved) {
			lossRec = append(lossRec, t)
		} else {
			rest = append(rest, t)
		}
	}
	var gl *tensor
	if l != lossAsIs {
		gl = e.lmLossBackwardShift(l, lossRec)
	} else {
		g1 := e.m.new(T*V, ldt, CatLoss)
		g2 := e.m.new(T*V, ldt, CatLoss)
		e.m.drop(g1)
		e.m.unsave(lossRec...)
		gl = g2
		if cdt := e.logitsDT(); cdt != ldt {
			gl = e.m.new(T*V, cdt, CatLoss)
			e.m.drop(g2)
		}
	}
	if e.logitsScale { // DivBackward0 by a scalar: grad / s, a new tensor
		gs := e.m.new(T*V, gl.dt, CatLoss)
		e.m.drop(gl)
		gl = gs
	}
	e.dx = e.m.new(e.fam.outputElems(e), e.dt.compute, CatActivations)
	e.paramGrads(e.headParams, micro)
	e.m.drop(gl)
	e.m.unsave(rest...)
	e.m.unsave(e.casts[0]...) // the head's weight copies are not needed any more
	e.headRec = nil
}
