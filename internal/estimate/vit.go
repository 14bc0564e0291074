package estimate

import (
	"fmt"

	"github.com/torchmem/torchmem/internal/estimate/models"
)

// vit is a Vision Transformer: torchvision's VisionTransformer (pre-LN,
// nn.MultiheadAttention), or transformers' ViT when the model came from a
// Hugging Face config (model_type "vit").
type vit struct{ familyDefaults }

func init() { registerFamily(models.ViT, vit{}) }

// options: the image must split into whole patches, and the learned
// position embedding is for the model's own image size.
func (vit) options(md *models.Model, o Options) (Options, error) {
	if o.ImageSize == 0 {
		o.ImageSize = md.ImageSize
	}
	if o.ImageSize%md.PatchSize != 0 {
		return o, fmt.Errorf("--image-size %d is not a multiple of the patch size %d", o.ImageSize, md.PatchSize)
	}
	if o.ImageSize != md.ImageSize {
		return o, fmt.Errorf("--image-size %d: %s's position embedding is for %d", o.ImageSize, md.Name, md.ImageSize)
	}
	return imageOptions(md, o)
}

func (vit) images() bool         { return true }
func (vit) classifierHead() bool { return false }

// seq: the patches and the class token.
func (vit) seq(md *models.Model, o Options) int { return md.Tokens(imageSizeOf(md, o)) }

func (vit) largestTensor(md *models.Model, o Options) float64 {
	return attentionLargest(md, o, float64(md.Tokens(o.ImageSize)), o.Attention == "eager")
}

// embed: the patch convolution, the class token concatenated (fp32, so a
// half convolution output is promoted), plus the position embedding.
func (vit) embed(e *ctx, data *tensor) *tensor {
	T, h, p := e.tokens(), int64(e.md.Hidden), e.dt.work
	b, ps := int64(e.o.Batch), int64(e.imageSize()/e.md.PatchSize)
	conv := e.linear(data, b*h*ps*ps)
	x := e.act(T*h, promote(conv.dt, p)) // cat with the fp32 class token
	e.m.drop(conv)
	out := e.act(T*h, x.dt) // + pos_embedding (a parameter)
	e.m.drop(x)
	return out
}

func (vit) block(e *ctx, _ int, x *tensor) *tensor {
	if e.md.ModelType == "vit" { // a Hugging Face config, not torchvision
		return e.hfViTBlock(x)
	}
	return e.vitBlock(x)
}

// head: the final LayerNorm (the classifier reads its class-token row).
func (vit) head(e *ctx, x *tensor) *tensor {
	return e.classifierHead(e.layerNormOf(x, e.tokens()), e.md.Hidden)
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
