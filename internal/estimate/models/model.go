// Package models turns a model description — a Hugging Face config.json, a
// safetensors header, a torchvision name or a built-in preset — into the
// shapes the memory estimator needs: the parameter tensors (with the block
// they belong to) and the dimensions that size the activations.
package models

import "fmt"

// Family is the way a model computes, which decides what autograd keeps.
type Family string

// The families the estimator knows how to walk.
const (
	GPT2   Family = "gpt2"   // learned positions, LayerNorm, fused qkv Conv1D, gelu MLP
	Llama  Family = "llama"  // RMSNorm, rotary, gated (SwiGLU) MLP, GQA: llama, mistral, qwen2/3, gemma
	BERT   Family = "bert"   // post-LN encoder with a masked-LM head: bert, roberta
	T5     Family = "t5"     // encoder-decoder, RMS LayerNorm, relative position bias
	ViT    Family = "vit"    // torchvision VisionTransformer (pre-LN, nn.MultiheadAttention)
	ResNet Family = "resnet" // torchvision ResNet (BasicBlock or Bottleneck)
	MoE    Family = "moe"    // Llama-style decoder with mixture-of-experts MLPs: mixtral, qwen2_moe, deepseek, deepseek_v2
)

// Model is the shape of one network. Transformer fields are zero for ResNet.
type Model struct {
	Name      string `json:"name"`
	Family    Family `json:"family"`
	ModelType string `json:"model_type,omitempty"` // config.json's model_type

	Hidden        int `json:"hidden_size,omitempty"`
	Intermediate  int `json:"intermediate_size,omitempty"`
	Layers        int `json:"layers,omitempty"`         // encoder layers for T5
	DecoderLayers int `json:"decoder_layers,omitempty"` // T5 only
	Heads         int `json:"heads,omitempty"`
	KVHeads       int `json:"kv_heads,omitempty"`
	HeadDim       int `json:"head_dim,omitempty"`
	Vocab         int `json:"vocab_size,omitempty"`
	MaxPositions  int `json:"max_positions,omitempty"`
	TypeVocab     int `json:"type_vocab_size,omitempty"`

	Activation string `json:"activation,omitempty"` // gelu_new, gelu, gelu_pytorch_tanh, silu, relu
	Gated      bool   `json:"gated_mlp,omitempty"`  // SwiGLU / GeGLU: gate and up projections
	Tied       bool   `json:"tied_embeddings"`
	QKVBias    bool   `json:"qkv_bias,omitempty"`
	QKNorm     bool   `json:"qk_norm,omitempty"`  // qwen3
	MLPBias    bool   `json:"mlp_bias,omitempty"` // granite: bias on gate/up/down_proj

	AttentionDropout float64 `json:"attention_dropout,omitempty"`
	HiddenDropout    float64 `json:"hidden_dropout,omitempty"`
	EmbedDropout     float64 `json:"embed_dropout,omitempty"`

	// SeqClassification: a *ForSequenceClassification head (pooler or
	// score layer over Classes labels) instead of the language-model head.
	SeqClassification bool `json:"sequence_classification,omitempty"`

	// Vision.
	ImageSize  int    `json:"image_size,omitempty"`
	PatchSize  int    `json:"patch_size,omitempty"`
	Classes    int    `json:"num_classes,omitempty"`
	ResNet     [4]int `json:"resnet_blocks,omitempty"`
	Bottleneck bool   `json:"bottleneck,omitempty"`

	// HeaderParams, when set, is the parameter count read from a
	// safetensors header; it overrides the count derived from the shapes
	// for weights, gradients and optimizer states.
	HeaderParams int64 `json:"header_params,omitempty"`
	// MoE is the mixture-of-experts layout (moe.go); nil for a dense model.
	MoE         *MoESpec `json:"moe,omitempty"`
	HeaderDType string   `json:"header_dtype,omitempty"`
	// ConfigTransformers is the transformers_version that wrote the
	// config.json: often, not always, the version the job runs.
	ConfigTransformers string `json:"config_transformers,omitempty"`
}

// Param is one parameter tensor. Block is the transformer layer (or ResNet
// stage block) it belongs to, -1 for embeddings and heads; Matmul marks the
// weights that autocast casts to half precision for a GEMM or convolution.
type Param struct {
	Name   string
	Elems  int64
	Block  int
	Matmul bool
}

// Validate checks that the dimensions the estimator divides by are set.
func (m *Model) Validate() error {
	s, err := specOf(m)
	if err != nil {
		return err
	}
	if s.convolutional {
		return s.validate(m)
	}
	if m.Hidden <= 0 || m.Layers <= 0 || m.Heads <= 0 || m.Intermediate <= 0 {
		return fmt.Errorf("model %s: hidden_size, layers, heads and intermediate_size must be positive", m.Name)
	}
	if m.HeadDim <= 0 || m.KVHeads <= 0 {
		return fmt.Errorf("model %s: head_dim and key/value heads must be positive", m.Name)
	}
	if !s.vision && m.Vocab <= 0 {
		return fmt.Errorf("model %s: vocab_size must be positive", m.Name)
	}
	if m.Hidden > 1<<20 || m.Layers > 4096 || m.DecoderLayers > 4096 || m.DecoderLayers < 0 || m.Heads > 1<<14 || m.Intermediate > 1<<22 || m.Vocab > 1<<24 {
		return fmt.Errorf("model %s: dimensions out of range", m.Name)
	}
	if s.validate != nil {
		return s.validate(m)
	}
	return nil
}

// ParamCount is the number of parameters: from the safetensors header when
// one was read, otherwise the sum over Params.
func (m *Model) ParamCount() int64 {
	if m.HeaderParams > 0 {
		return m.HeaderParams
	}
	var n int64
	for _, p := range m.Params() {
		n += p.Elems
	}
	return n
}

// BlockCount is the number of repeated blocks Params numbers.
func (m *Model) BlockCount() int {
	if s := specs[m.Family]; s.blocks != nil {
		return s.blocks(m)
	}
	return m.Layers
}

// Params lists the parameter tensors in module order (none for a family
// that is not registered: Validate refuses it).
func (m *Model) Params() []Param {
	if s, ok := specs[m.Family]; ok {
		return s.params(m)
	}
	return nil
}

type plist []Param

func (l *plist) add(name string, block int, matmul bool, dims ...int) {
	n := int64(1)
	for _, d := range dims {
		n *= int64(d)
	}
	*l = append(*l, Param{Name: name, Elems: n, Block: block, Matmul: matmul})
}

// linear adds a weight (a GEMM operand) and optionally its bias.
func (l *plist) linear(name string, block, in, out int, bias bool) {
	l.add(name+".weight", block, true, in, out)
	if bias {
		l.add(name+".bias", block, false, out)
	}
}

func (l *plist) norm(name string, block, h int, bias bool) {
	l.add(name+".weight", block, false, h)
	if bias {
		l.add(name+".bias", block, false, h)
	}
}
