package models

// Hugging Face config.json, e.g. (gpt2):
//
//	{"model_type": "gpt2", "vocab_size": 50257, "n_positions": 1024, "n_embd": 768,
//	 "n_layer": 12, "n_head": 12, "n_inner": null, "activation_function": "gelu_new",
//	 "attn_pdrop": 0.1, "resid_pdrop": 0.1, "embd_pdrop": 0.1, "tie_word_embeddings": true}
//
// or a torchvision stand-in, {"torchvision": "resnet50"}.

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
)

// MaxConfigBytes bounds how much of a config file is read.
const MaxConfigBytes = 4 << 20

// LoadConfig reads a Hugging Face config.json (or {"torchvision": NAME}).
func LoadConfig(path string) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open config: %w", err)
	}
	defer f.Close()
	m, err := ParseConfig(io.LimitReader(f, MaxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

type cfg map[string]any

// ParseConfig parses config.json text into a Model.
func ParseConfig(r io.Reader) (*Model, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	if len(data) > MaxConfigBytes {
		return nil, fmt.Errorf("config larger than %d bytes", MaxConfigBytes)
	}
	var c cfg
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("parse config json: %w", err)
	}
	return fromConfig(c)
}

// FromConfigMap builds a Model from an already decoded config object.
func FromConfigMap(c map[string]any) (*Model, error) { return fromConfig(cfg(c)) }

// builders are the config.json model_types each family registered.
var builders = map[string]func(cfg) *Model{}

func fromConfig(c cfg) (*Model, error) {
	if tv, ok := c["torchvision"].(string); ok {
		return torchvisionModel(tv)
	}
	mt, _ := c["model_type"].(string)
	b, ok := builders[strings.ToLower(mt)]
	if !ok {
		return nil, unknownArch(c, mt)
	}
	if err := checkIntFields(c); err != nil {
		return nil, err
	}
	m := b(c)
	m.ModelType = mt
	if v, ok := c["transformers_version"].(string); ok && len(v) <= 32 {
		m.ConfigTransformers = v
	}
	if a, ok := c["architectures"].([]any); ok && !m.IsVision() {
		for _, x := range a {
			if s, _ := x.(string); strings.HasSuffix(s, "ForSequenceClassification") {
				m.SeqClassification = true
				m.Classes = textLabels(c)
			}
		}
	}
	if n, _ := c["_name_or_path"].(string); n != "" {
		m.Name = n
	} else {
		m.Name = mt
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("config model_type %q: %w", mt, err)
	}
	return m, nil
}

func unknownArch(c cfg, mt string) error {
	known := make([]string, 0, len(builders))
	for k := range builders {
		known = append(known, k)
	}
	sort.Strings(known)
	what := fmt.Sprintf("model_type %q", mt)
	if mt == "" {
		what = "no model_type"
		if a, ok := c["architectures"].([]any); ok && len(a) > 0 {
			what = fmt.Sprintf("no model_type (architectures %v)", a)
		}
	}
	return fmt.Errorf("unsupported architecture: %s; known model types: %s, or {\"torchvision\": \"resnet50\"}",
		what, strings.Join(known, ", "))
}

// intFields are the integer sizes the builders read. A value of another
// type would otherwise be skipped for the builder's default (a Llama with
// "hidden_size": "4096" estimated as whatever the default is), so it is an
// error naming the field instead. null is HF's "not set" and allowed.
var intFields = []string{"d_ff", "d_kv", "d_model", "hidden_size", "image_size", "intermediate_size",
	"max_position_embeddings", "n_embd", "n_head", "n_inner", "n_layer", "n_positions",
	"num_attention_heads", "num_decoder_layers", "num_heads", "num_hidden_layers",
	"num_key_value_heads", "num_labels", "num_layers", "patch_size", "type_vocab_size", "vocab_size", "head_dim",
	// Mixture of experts (moe.go).
	"num_local_experts", "num_experts", "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size",
	"shared_expert_intermediate_size", "n_shared_experts", "first_k_dense_replace", "moe_layer_freq",
	"decoder_sparse_step", "kv_lora_rank", "q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"}

func checkIntFields(c cfg) error {
	for _, k := range intFields {
		v, present := c[k]
		if !present || v == nil {
			continue
		}
		f, ok := v.(float64)
		if !ok || f != math.Trunc(f) || f < 0 {
			return fmt.Errorf("config field %s: want a non-negative integer, got %v (%T)", k, v, v)
		}
	}
	return nil
}

// num returns the first of keys present as a number, else def.
func (c cfg) num(def float64, keys ...string) float64 {
	for _, k := range keys {
		if v, ok := c[k].(float64); ok {
			return v
		}
	}
	return def
}

func (c cfg) int(def int, keys ...string) int {
	v := c.num(float64(def), keys...)
	if v < 0 || v > 1<<30 {
		return -1
	}
	return int(v)
}

func (c cfg) str(def string, keys ...string) string {
	for _, k := range keys {
		if v, ok := c[k].(string); ok {
			return v
		}
	}
	return def
}

func (c cfg) boolean(def bool, key string) bool {
	if v, ok := c[key].(bool); ok {
		return v
	}
	return def
}

func gpt2Config(c cfg) *Model {
	h := c.int(768, "n_embd")
	heads := c.int(12, "n_head")
	return &Model{Family: GPT2, Hidden: h, Layers: c.int(12, "n_layer"), Heads: heads, KVHeads: heads,
		HeadDim: safeDiv(h, heads), Intermediate: c.int(4*h, "n_inner"), Vocab: c.int(50257, "vocab_size"),
		MaxPositions: c.int(1024, "n_positions"), Activation: c.str("gelu_new", "activation_function"),
		Tied: c.boolean(true, "tie_word_embeddings"), AttentionDropout: c.num(0.1, "attn_pdrop"),
		HiddenDropout: c.num(0.1, "resid_pdrop"), EmbedDropout: c.num(0.1, "embd_pdrop")}
}

func llamaConfig(c cfg) *Model {
	mt, _ := c["model_type"].(string)
	h := c.int(4096, "hidden_size")
	heads := c.int(32, "num_attention_heads")
	tiedDefault := strings.HasPrefix(mt, "gemma")
	act := c.str("silu", "hidden_act", "hidden_activation")
	return &Model{Family: Llama, Hidden: h, Layers: c.int(32, "num_hidden_layers"), Heads: heads,
		KVHeads: c.int(heads, "num_key_value_heads"), HeadDim: c.int(safeDiv(h, heads), "head_dim"),
		Intermediate: c.int(4*h, "intermediate_size"), Vocab: c.int(32000, "vocab_size"),
		MaxPositions: c.int(4096, "max_position_embeddings"), Activation: act, Gated: true,
		Tied: c.boolean(tiedDefault, "tie_word_embeddings"), AttentionDropout: c.num(0, "attention_dropout"),
		QKVBias: c.boolean(mt == "qwen2", "attention_bias"), QKNorm: mt == "qwen3"}
}

func bertConfig(c cfg) *Model {
	h := c.int(768, "hidden_size")
	heads := c.int(12, "num_attention_heads")
	return &Model{Family: BERT, Hidden: h, Layers: c.int(12, "num_hidden_layers"), Heads: heads,
		KVHeads: heads, HeadDim: safeDiv(h, heads), Intermediate: c.int(4*h, "intermediate_size"),
		Vocab: c.int(30522, "vocab_size"), MaxPositions: c.int(512, "max_position_embeddings"),
		TypeVocab: c.int(2, "type_vocab_size"), Activation: c.str("gelu", "hidden_act"),
		Tied: c.boolean(true, "tie_word_embeddings"), HiddenDropout: c.num(0.1, "hidden_dropout_prob"),
		AttentionDropout: c.num(0.1, "attention_probs_dropout_prob"), EmbedDropout: c.num(0.1, "hidden_dropout_prob")}
}

func t5Config(c cfg) *Model {
	d := c.int(512, "d_model")
	layers := c.int(6, "num_layers")
	proj := c.str("relu", "feed_forward_proj")
	act := strings.TrimPrefix(proj, "gated-")
	if act == "gelu" {
		act = "gelu_new" // HF maps gated-gelu to gelu_new
	}
	drop := c.num(0.1, "dropout_rate")
	return &Model{Family: T5, Hidden: d, Layers: layers, DecoderLayers: c.int(layers, "num_decoder_layers"),
		Heads: c.int(8, "num_heads"), KVHeads: c.int(8, "num_heads"), HeadDim: c.int(64, "d_kv"),
		Intermediate: c.int(2048, "d_ff"), Vocab: c.int(32128, "vocab_size"), Activation: act,
		Gated: strings.HasPrefix(proj, "gated-"), Tied: c.boolean(true, "tie_word_embeddings"),
		AttentionDropout: drop, HiddenDropout: drop, EmbedDropout: drop}
}

// hfViTConfig maps a Hugging Face ViT config onto torchvision's layout,
// which has the same tensors and activations.
func hfViTConfig(c cfg) *Model {
	h := c.int(768, "hidden_size")
	heads := c.int(12, "num_attention_heads")
	return &Model{Family: ViT, Hidden: h, Layers: c.int(12, "num_hidden_layers"), Heads: heads,
		KVHeads: heads, HeadDim: safeDiv(h, heads), Intermediate: c.int(4*h, "intermediate_size"),
		ImageSize: c.int(224, "image_size"), PatchSize: c.int(16, "patch_size"), Activation: "gelu",
		Classes: labels(c), AttentionDropout: c.num(0, "attention_probs_dropout_prob"),
		HiddenDropout: c.num(0, "hidden_dropout_prob")}
}

// textLabels is a text classifier's width: id2label's size, else num_labels, else 2.
func textLabels(c cfg) int {
	if m, ok := c["id2label"].(map[string]any); ok && len(m) > 0 {
		return len(m)
	}
	return max(1, c.int(2, "num_labels"))
}

// labels is the classifier width: id2label's size, 1000 (ImageNet) if absent.
func labels(c cfg) int {
	if m, ok := c["id2label"].(map[string]any); ok && len(m) > 0 {
		return len(m)
	}
	return c.int(1000, "num_labels")
}

func safeDiv(a, b int) int {
	if b <= 0 {
		return 0
	}
	return a / b
}
