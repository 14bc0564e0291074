package estimate

import (
	"fmt"
	"strings"

	"github.com/torchmem/torchmem/internal/estimate/models"
)

// A model family (models.Family) is the way a model computes. The walk
// (walk.go, run.go, head.go) is the same for every model; what differs it
// asks the model's family, one type per family in a file of its own
// (gpt2.go, llama.go, bert.go, t5.go, vit.go, resnet.go, moe.go), which
// registers it (families below).
//
// Two kinds of method: decisions are pure functions of the model and the
// options; recipes emit a part of the step's ops (allocations, frees, what
// autograd saves) into the walk's ctx. A family embeds familyDefaults and
// overrides what differs from it.
type family interface {
	// options checks o against md and fills the family's defaults (an
	// image model's image size); an error is the user's to fix.
	options(md *models.Model, o Options) (Options, error)
	// generates: --kv-cache and --gen-len are modelled (decoder-only LMs).
	generates() bool
	// images: the input is a batch of fp32 images and the head a
	// classifier over md.Classes, not token ids and a language-model head.
	images() bool
	// classifierHead: a sequence-classification head (--head
	// classification) can replace the language-model head.
	classifierHead() bool
	// seq is the tokens per sample the blocks see.
	seq(md *models.Model, o Options) int
	// largestTensor is the element count of the largest tensor one step
	// makes, which must stay countable in int64 bytes.
	largestTensor(md *models.Model, o Options) float64
	// alwaysEager: the model's attention materialises its scores whatever
	// --attention says, so the sdpa lever does not apply.
	alwaysEager() bool
	// lossDT is the element size of the language-model loss's tensors.
	lossDT(dt dtypes) int64
	// lossLayout is how transformers version v (set: --transformers was
	// given) runs the family's language-model loss (lmloss.go).
	lossLayout(v version, set bool) lossLayout
	// decoderStart is the first decoder block of an encoder-decoder (the
	// walk runs enterDecoder before it, and releases what that made when
	// the backward reaches the block before it); 0 for a single stack.
	decoderStart(md *models.Model) int

	// embed turns the step's input into the first block's input.
	embed(e *ctx, data *tensor) *tensor
	// block runs block i's forward on x and returns its output.
	block(e *ctx, i int, x *tensor) *tensor
	// enterDecoder ends the encoder (its output is x) and starts the decoder.
	enterDecoder(e *ctx, x *tensor) *tensor
	// head runs the final norm, the output layer and (training) the loss;
	// in inference it returns the logits, which the caller holds.
	head(e *ctx, x *tensor) *tensor
	// blockBackward runs block i's backward from e.dx, leaving there the
	// gradient of the block's input.
	blockBackward(e *ctx, i, micro int)
	// stemBackward makes the gradients of what runs before the blocks.
	stemBackward(e *ctx, micro int)
	// outputElems is the element count of the last block's output.
	outputElems(e *ctx) int64
	// tensorParallel is one TP rank's share of md (tp.go), or an error
	// when the family's tensor-parallel layout is not modelled.
	tensorParallel(md *models.Model, tp int) (*models.Model, error)
	// loraTargets are the modules PEFT's LoRA targets by default
	// (TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING); nil: LoRA and
	// quantized weights are not modelled for the family (peft.go).
	loraTargets() []string
	// attention: the family has attention layers (--attention applies).
	attention() bool
}

// families are the registered families: each family's file registers
// itself (registerFamily in its init), so a new family is that file, its
// models counterpart (models/family.go) and their tests.
var families = map[models.Family]family{}

func registerFamily(f models.Family, fam family) {
	if _, dup := families[f]; dup {
		panic("estimate: family registered twice: " + string(f))
	}
	families[f] = fam
}

// familyOf returns the family that walks md.
func familyOf(md *models.Model) (family, error) {
	f, ok := families[md.Family]
	if !ok {
		return nil, fmt.Errorf("model %s: no estimator for family %q", md.Name, md.Family)
	}
	return f, nil
}

// Images reports whether md's family takes images (--image-size) rather
// than token ids (--seq); false for a family without an estimator.
func Images(md *models.Model) bool {
	f, err := familyOf(md)
	return err == nil && f.images()
}

// HasAttention reports whether the family of a result has attention
// layers (false for a ConvNet: --attention does not apply).
func HasAttention(family string) bool {
	f, ok := families[models.Family(family)]
	return !ok || f.attention()
}

// ClassifierHead reports whether --head classification applies to md's
// family.
func ClassifierHead(md *models.Model) bool {
	f, err := familyOf(md)
	return err == nil && f.classifierHead()
}

// familyDefaults are the answers of a single-stack transformer language
// model; a family embeds it and overrides what differs.
type familyDefaults struct{}

func (familyDefaults) options(md *models.Model, o Options) (Options, error) {
	return textOptions(md, o, false)
}
func (familyDefaults) generates() bool                        { return false }
func (familyDefaults) images() bool                           { return false }
func (familyDefaults) classifierHead() bool                   { return true }
func (familyDefaults) seq(_ *models.Model, o Options) int     { return o.Seq }
func (familyDefaults) alwaysEager() bool                      { return false }
func (familyDefaults) lossDT(dtypes) int64                    { return 4 }
func (familyDefaults) lossLayout(version, bool) lossLayout    { return lossAsIs }
func (familyDefaults) decoderStart(*models.Model) int         { return 0 }
func (familyDefaults) enterDecoder(_ *ctx, x *tensor) *tensor { return x }

func (familyDefaults) largestTensor(md *models.Model, o Options) float64 {
	return attentionLargest(md, o, float64(o.Seq+o.GenLen), o.Attention == "eager")
}

func (familyDefaults) blockBackward(e *ctx, i, micro int) {
	e.blockBackward(e.blocks[i], e.blockParams[i], micro)
}

func (familyDefaults) stemBackward(e *ctx, micro int) { e.paramGrads(e.stemParams, micro) }

func (familyDefaults) outputElems(e *ctx) int64 { return e.seqShard(e.tokens() * int64(e.md.Hidden)) }

func (familyDefaults) loraTargets() []string { return nil }
func (familyDefaults) attention() bool       { return true }

func (familyDefaults) tensorParallel(md *models.Model, tp int) (*models.Model, error) {
	if tp > 1 {
		return nil, fmt.Errorf("--tp: tensor parallelism is modelled for Llama-style and mixture-of-experts models, not %s", md.Family)
	}
	return md, nil
}

// textOptions: a language model needs --seq. Learned absolute positions
// (absolute) end at MaxPositions: HF's GPT-2 and BERT fail with an index
// error past them, so there is no memory to estimate.
func textOptions(md *models.Model, o Options, absolute bool) (Options, error) {
	if o.Seq == 0 {
		return o, fmt.Errorf("--seq is required for %s", md.Name)
	}
	if n := o.Seq + o.GenLen; absolute && md.MaxPositions > 0 && n > md.MaxPositions {
		what := fmt.Sprintf("--seq %d", o.Seq)
		if o.GenLen > 0 {
			what += fmt.Sprintf(" plus --gen-len %d", o.GenLen)
		}
		return o, fmt.Errorf("%s exceeds the %d positions of %s's position embedding", what, md.MaxPositions, md.Name)
	}
	return o, nil
}

// imageOptions: an image model takes its own image size by default and
// has no sequence length.
func imageOptions(md *models.Model, o Options) (Options, error) {
	if o.ImageSize == 0 {
		o.ImageSize = md.ImageSize
	}
	if o.ImageSize < 32 {
		return o, fmt.Errorf("--image-size %d too small", o.ImageSize)
	}
	o.Seq = 0
	return o, nil
}

// attentionLargest: the largest tensor of a transformer step is the
// logits or the widest activation over s tokens a sample, or with
// materialised attention (eager) the scores.
func attentionLargest(md *models.Model, o Options, s float64, eager bool) float64 {
	b := float64(o.Batch)
	big := b * s * float64(max(md.Vocab, 4*md.Intermediate, 4*md.Hidden))
	if eager {
		big = max(big, b*float64(md.Heads)*s*s)
	}
	return big
}

// classifierParam: a vision classifier's output layer (torchvision's fc
// and heads.head), whose gradient appears at the head's backward.
func classifierParam(p models.Param) bool {
	return strings.HasPrefix(p.Name, "fc.") || strings.HasPrefix(p.Name, "heads.")
}
