package estimate

import "github.com/torchmem/torchmem/internal/estimate/models"

// gpt2 is Hugging Face's GPT-2: learned absolute positions, pre-LN
// LayerNorm, a fused qkv Conv1D, a gelu_new MLP.
type gpt2 struct{ familyDefaults }

func (gpt2) lossLayout(v version, set bool) lossLayout { return gpt2LossLayout(v, set) }

func init() { registerFamily(models.GPT2, gpt2{}) }

func (gpt2) loraTargets() []string { return []string{"c_attn"} }

func (gpt2) options(md *models.Model, o Options) (Options, error) { return textOptions(md, o, true) }
func (gpt2) generates() bool                                      { return true }

func (gpt2) embed(e *ctx, _ *tensor) *tensor {
	e.causalMask()
	T, h, p, s := e.tokens(), int64(e.md.Hidden), e.dt.work, int64(e.seq())
	// GPT2Model.forward keeps inputs_embeds and position_embeds in its
	// locals until it returns: both stay through the blocks (posBias is
	// what the stack's forward holds).
	wte, wpe := e.act(T*h, p), e.act(s*h, p)
	x := e.act(T*h, p)
	e.posBias = append(e.posBias, wte, wpe)
	return e.dropout(x, e.md.EmbedDropout)
}

func (gpt2) block(e *ctx, _ int, x *tensor) *tensor {
	T, h := e.tokens(), int64(e.md.Hidden)
	// GPT2Block keeps ln_1's output in its hidden_states until the
	// attention returns, GPT2Attention the c_attn output (q, k, v are
	// views of it) until after c_proj, and GPT2Block ln_2's output until
	// the MLP returns: in training they are saved anyway, in inference
	// these references are what keeps them alive.
	ln1 := e.layerNorm(x, T)
	qkv := e.linear(ln1, 3*T*h)
	// q, k, v are views of the c_attn output: SDPA saves that one tensor.
	att := e.attention(attn{q: qkv, heads: int64(e.md.Heads), kvHeads: int64(e.md.Heads),
		dHead: int64(e.md.HeadDim), qLen: int64(e.seq()), kLen: int64(e.seq()), dropout: e.md.AttentionDropout})
	e.kvKeep(T*h, qkv.dt) // keys
	e.kvKeep(T*h, qkv.dt) // values
	proj := e.linear(att, T*h)
	e.m.drop(att, qkv)
	x2 := e.add(e.dropout(proj, e.md.HiddenDropout), x)
	e.m.drop(ln1)
	ln2 := e.layerNorm(x2, T)
	fc := e.linear(ln2, T*int64(e.md.Intermediate))
	y := e.activation(fc, e.md.Activation)
	p2 := e.linear(y, T*h)
	e.m.drop(y)
	p2 = e.dropout(p2, e.md.HiddenDropout)
	e.m.drop(ln2)
	x2.live = true // still the residual
	return e.add(p2, x2)
}

// head: the final LayerNorm (ln_f), then the LM head or the score layer.
func (gpt2) head(e *ctx, x *tensor) *tensor {
	e.exitStack(false)
	T := e.tokens()
	if e.md.SeqClassification {
		return e.seqClassifierHead(e.layerNormOf(x, T), T)
	}
	return e.lmHead(e.layerNormOf(x, T))
}
