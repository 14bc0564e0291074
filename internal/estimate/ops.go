package estimate

// The operations the model walks are made of. Each allocates what PyTorch
// allocates for it and marks what autograd saves for the backward pass; the
// comments name the op whose derivative formula (tools/autograd/
// derivatives.yaml) decides what is saved.

func promote(a, b int64) int64 { return max(a, b) }

// act allocates an activation-side tensor and records it for the current
// block, whose backward releases it.
func (e *ctx) act(elems, dt int64) *tensor {
	t := e.m.new(e.seqShard(elems), dt, e.m.cat)
	e.rec = append(e.rec, t)
	return t
}

// castIn is the tensor a GEMM or convolution reads: under autocast an fp32
// input is cast to half first (a new tensor per call: only leaf weights are
// cached), and that copy is what the op saves.
func (e *ctx) castIn(x *tensor) *tensor {
	if e.dt.autocast && x.dt == 4 {
		return e.act(x.elems, 2)
	}
	return x
}

// linear is a GEMM (nn.Linear, Conv1D's addmm, a convolution): it saves its
// input (for the weight's gradient) and returns a new output.
func (e *ctx) linear(x *tensor, outElems int64) *tensor {
	if e.pq != nil {
		return e.peftLinear(x, outElems)
	}
	in := e.castIn(x)
	out := e.act(outElems, e.dt.compute)
	e.m.save(in)
	if in != x {
		e.m.drop(in)
	}
	return out
}

// layerNorm saves its input and the per-row mean and rstd; under autocast
// it runs in fp32, casting a half input first.
func (e *ctx) layerNorm(x *tensor, rows int64) *tensor {
	in := x
	if e.dt.autocast && x.dt != 4 {
		in = e.act(x.elems, 4)
	}
	stats := e.act(2*rows, 4)
	out := e.act(x.elems, e.dt.norm)
	e.m.save(in, stats)
	e.m.drop(stats)
	if in != x {
		e.m.drop(in)
	}
	return out
}

// rmsNorm is LlamaRMSNorm / T5LayerNorm: x.to(fp32); pow(2).mean;
// x * rsqrt(var+eps); weight * x.to(input dtype). pow and the first mul
// save the fp32 input, the weight mul saves the normalised tensor.
func (e *ctx) rmsNorm(x *tensor, rows int64) *tensor {
	x32 := x
	if x.dt != 4 {
		x32 = e.act(x.elems, 4)
	}
	sq := e.act(x.elems, 4)
	r := e.act(rows, 4)
	e.m.drop(sq)
	xn := e.act(x.elems, 4)
	e.m.save(x32, r)
	e.m.drop(r)
	if x32 != x {
		e.m.drop(x32)
	}
	xh := xn
	if x.dt != 4 {
		xh = e.act(x.elems, x.dt)
		e.m.drop(xn)
	}
	e.m.save(xh)
	out := e.act(x.elems, x.dt)
	e.m.drop(xh)
	return out
}

// dropout (native_dropout) saves a one-byte mask; p == 0 and eval mode
// return the input itself.
func (e *ctx) dropout(x *tensor, p float64) *tensor {
	if p <= 0 || e.o.Inference {
		return x
	}
	mask := e.act(x.elems, 1)
	out := e.act(x.elems, x.dt)
	e.m.save(mask)
	e.m.drop(mask, x)
	return out
}

// add is a residual connection: no saved tensors, type promotion decides
// the dtype (half + fp32 residual = fp32 under autocast).
func (e *ctx) add(a, b *tensor) *tensor {
	out := e.act(max(a.elems, b.elems), promote(a.dt, b.dt))
	e.m.drop(a, b)
	return out
}

// activation applies the MLP non-linearity to x (consumed).
func (e *ctx) activation(x *tensor, name string) *tensor {
	switch name {
	case "gelu_new", "gelu_fast", "gelu_accurate":
		return e.geluNew(x)
	case "relu":
		out := e.act(x.elems, x.dt) // relu saves its result
		e.m.save(out)
		e.m.drop(x)
		return out
	}
	// gelu, gelu_pytorch_tanh, silu/swish: fused kernels that save the input.
	out := e.act(x.elems, x.dt)
	e.m.save(x)
	e.m.drop(x)
	return out
}

// geluNew is transformers' NewGELUActivation, written in Python:
// 0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*pow(x,3)))). pow saves its input
// (under autocast pow is an fp32 op, so an fp32 copy), tanh its output, and
// the final product both factors: four saved tensors the size of the MLP.
// Python evaluates 0.5*x first, so it is alive through the whole chain, and
// x stays referenced by the caller (GPT2MLP's hidden_states) until the
// activation returns: in inference, where nothing is saved, four tensors
// the size of the MLP are alive at once (x, 0.5*x, two temporaries).
func (e *ctx) geluNew(x *tensor) *tensor {
	w := e.act(x.elems, x.dt) // 0.5 * x keeps x's dtype
	f := x.dt
	in := x
	if e.dt.autocast {
		f, in = 4, e.act(x.elems, 4)
	}
	e.m.save(in)
	p := e.act(x.elems, f)
	q := e.act(x.elems, f)
	e.m.drop(p)
	s := e.act(x.elems, f)
	e.m.drop(q)
	if in != x {
		e.m.drop(in)
	}
	z := e.act(x.elems, f)
	e.m.drop(s)
	t := e.act(x.elems, f)
	e.m.drop(z)
	u := e.act(x.elems, f)
	e.m.save(t, u, w)
	e.m.drop(t)
	y := e.act(x.elems, promote(w.dt, u.dt))
	e.m.drop(w, u, x)
	return y
}

// attn is one attention call on q, k, v (k, v nil when they are views of
// q's storage, as in a fused qkv projection). causal and dropout pick the
// kernel's behaviour; fp32Softmax marks eager code that upcasts scores.
type attn struct {
	q, k, v      *tensor
	heads, dHead int64
	kvHeads      int64
	qLen, kLen   int64 // per sample
	dropout      float64
	fp32Softmax  bool
}

// attention returns the attention output (b, s, heads*dHead). Flash and
// memory-efficient SDPA save q, k, v, the output and the log-sum-exp and
// never materialise the s×s scores; eager attention saves softmax output,
// dropout mask and dropped probabilities: Korthikanti's 5as/h term.
func (e *ctx) attention(a attn) *tensor {
	if e.o.Attention == "eager" {
		return e.eagerAttention(a)
	}
	b := int64(e.o.Batch)
	qs, ks, vs := e.sdpaIn(a.q), e.sdpaIn(a.k), e.sdpaIn(a.v)
	out := e.act(b*a.qLen*a.heads*a.dHead, qs.dt)
	lse := e.act(b*a.heads*((a.qLen+31)/32*32), 4)
	e.m.save(qs, ks, vs, out, lse)
	if e.m.grad {
		out.bwdWorkspace = e.attentionBackwardWorkspace(a)
	}
	e.m.drop(lse)
	for _, c := range []*tensor{qs, ks, vs} {
		if c != nil && c != a.q && c != a.k && c != a.v {
			e.m.drop(c)
		}
	}
	return out
}

// sdpaIn: scaled_dot_product_attention is on autocast's half list.
func (e *ctx) sdpaIn(x *tensor) *tensor {
	if x == nil {
		return nil
	}
	return e.castIn(x)
}

func (e *ctx) eagerAttention(a attn) *tensor {
	b := int64(e.o.Batch)
	k, v := a.k, a.v
	if k != nil && a.kvHeads < a.heads { // repeat_kv materialises full-width k and v
		k = e.act(b*a.kLen*a.heads*a.dHead, k.dt)
		v = e.act(b*a.kLen*a.heads*a.dHead, v.dt)
	}
	dt := e.dt.compute
	scores := b * a.heads * a.qLen * a.kLen
	qi := e.castIn(a.q)
	e.m.save(qi, k)
	if qi != a.q {
		e.m.drop(qi)
	}
	s1 := e.act(scores, dt)
	s2 := e.act(scores, dt) // scaled and masked
	e.m.drop(s1)
	smDT := dt
	if a.fp32Softmax || e.dt.autocast {
		smDT = 4
	}
	sm := e.act(scores, smDT)
	e.m.drop(s2)
	e.m.save(sm)
	probs := sm
	if smDT != dt {
		probs = e.act(scores, dt)
		// softmax(dtype=float32).to(half): the backward upcasts the half
		// gradient of probs (ToCopyBackward) and _softmax_backward_data
		// makes its fp32 output next to it and the saved fp32 softmax:
		// three fp32 score tensors at once.
		sm.bwdGrads = scores * 4
	}
	if d := e.dropout(probs, a.dropout); d != probs {
		probs = d
	}
	e.m.save(probs, v)
	out := e.act(b*a.qLen*a.heads*a.dHead, dt)
	e.m.drop(sm, probs)
	if k != a.k {
		e.m.drop(k, v)
	}
	return out
}

// layerNormOf normalises x and lets go of it (post-LN blocks).
func (e *ctx) layerNormOf(x *tensor, rows int64) *tensor {
	out := e.layerNorm(x, rows)
	e.m.drop(x)
	return out
}

// rmsNormOf normalises x and lets go of it.
func (e *ctx) rmsNormOf(x *tensor, rows int64) *tensor {
	out := e.rmsNorm(x, rows)
	e.m.drop(x)
	return out
}

// causalMask: for eager attention, a decoder's create_causal_mask
// materialises a (b, 1, s, s) float mask in the hidden states' dtype,
// kept for the whole forward.
func (e *ctx) causalMask() {
	if e.o.Attention == "eager" {
		s := int64(e.seq())
		e.posBias = append(e.posBias, e.act(int64(e.o.Batch)*s*s, e.dt.resid))
	}
}

// attentionBackwardWorkspace is what the flash and memory-efficient SDPA
// backward kernels take from the caching allocator for the call, besides
// the gradients of q, k and v: FlashAttention-2's dq accumulator in fp32
// (batch x q length rounded to 128 x heads x head size rounded to 8, then
// to 32, or 64 above 128: mha_bwd's head_size_rounded in PyTorch's
// flash_attn/flash_api.cpp) and its softmax_d (batch x heads x rounded
// length, fp32); the memory-efficient kernel's fp32 accumulators are of
// the same order. The tracer's _trace_sdpa.py adds the same two tensors.
// It is transient: it shows in the reserved memory of a training step,
// not in the peak allocated, which is reached before the attention's
// backward runs.
func (e *ctx) attentionBackwardWorkspace(a attn) int64 {
	b := int64(e.o.Batch)
	s := (a.qLen + 127) / 128 * 128
	d := (a.dHead + 7) / 8 * 8
	if d <= 128 {
		d = (d + 31) / 32 * 32
	} else {
		d = (d + 63) / 64 * 64
	}
	return b*s*a.heads*d*4 + b*a.heads*s*4
}
