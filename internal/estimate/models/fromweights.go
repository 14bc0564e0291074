package models

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
)

// FromSafetensors reads a checkpoint's header(s) for the parameter count and
// dtype. The architecture comes from a config.json in the same directory
// when there is one, otherwise from the tensor names and shapes (Llama- and
// GPT-2-style checkpoints).
func FromSafetensors(p string) (*Model, *Header, error) {
	h, err := ReadSafetensors(p)
	if err != nil {
		return nil, nil, err
	}
	if h.Params == 0 {
		return nil, nil, fmt.Errorf("%s: no tensors in the safetensors header", p)
	}
	cfgPath := filepath.Join(filepath.Dir(p), "config.json")
	var m *Model
	if _, statErr := os.Stat(cfgPath); statErr == nil {
		if m, err = LoadConfig(cfgPath); err != nil {
			return nil, nil, err
		}
	} else if m, err = InferFromTensors(h); err != nil {
		return nil, nil, fmt.Errorf("%s: %w; put the model's config.json beside it or pass --config", p, err)
	}
	m.HeaderParams, m.HeaderDType = h.Params, h.DominantDType()
	if m.Name == "" || m.Name == m.ModelType {
		m.Name = filepath.Base(p)
	}
	return m, h, nil
}

var layerRe = regexp.MustCompile(`(?:^|\.)(?:layers|h)\.(\d+)\.`)

// InferFromTensors guesses a Llama- or GPT-2-style model from tensor names.
func InferFromTensors(h *Header) (*Model, error) {
	by := map[string]Tensor{}
	layers := 0
	for _, t := range h.Tensors {
		by[t.Name] = t
		if mm := layerRe.FindStringSubmatch(t.Name); mm != nil {
			if n, err := strconv.Atoi(mm[1]); err == nil && n+1 > layers && n < 4096 {
				layers = n + 1
			}
		}
	}
	get := func(names ...string) (Tensor, bool) {
		for _, n := range names {
			if t, ok := by[n]; ok && len(t.Shape) >= 1 {
				return t, true
			}
		}
		return Tensor{}, false
	}
	if emb, ok := get("model.embed_tokens.weight"); ok && len(emb.Shape) == 2 {
		return inferLlama(get, emb, layers)
	}
	if wte, ok := get("wte.weight", "transformer.wte.weight"); ok && len(wte.Shape) == 2 {
		return inferGPT2(get, wte, layers)
	}
	return nil, errors.New("cannot tell the architecture from the tensor names")
}

func inferLlama(get func(...string) (Tensor, bool), emb Tensor, layers int) (*Model, error) {
	h := int(emb.Shape[1])
	q, okQ := get("model.layers.0.self_attn.q_proj.weight")
	k, okK := get("model.layers.0.self_attn.k_proj.weight")
	g, okG := get("model.layers.0.mlp.gate_proj.weight")
	if !okQ || !okK || !okG || len(q.Shape) != 2 || len(k.Shape) != 2 || len(g.Shape) != 2 || layers == 0 {
		return nil, errors.New("llama-style names without layer-0 q/k/gate projections")
	}
	// The head size is not in the shapes (except through qwen3's q_norm);
	// take the largest usual one that divides both projections.
	hd := 8
	for _, c := range []int{128, 64, 32, 16} {
		if int(q.Shape[0])%c == 0 && int(k.Shape[0])%c == 0 {
			hd = c
			break
		}
	}
	if qn, ok := get("model.layers.0.self_attn.q_norm.weight"); ok && qn.Shape[0] > 0 {
		hd = int(qn.Shape[0])
	}
	_, hasHead := get("lm_head.weight")
	_, bias := get("model.layers.0.self_attn.q_proj.bias")
	m := &Model{Family: Llama, ModelType: "llama", Hidden: h, Layers: layers, HeadDim: hd,
		Heads: int(q.Shape[0]) / hd, KVHeads: int(k.Shape[0]) / hd, Intermediate: int(g.Shape[0]),
		Vocab: int(emb.Shape[0]), MaxPositions: 4096, Activation: "silu", Gated: true, Tied: !hasHead, QKVBias: bias}
	return m, m.Validate()
}

func inferGPT2(get func(...string) (Tensor, bool), wte Tensor, layers int) (*Model, error) {
	h := int(wte.Shape[1])
	fc, ok := get("h.0.mlp.c_fc.weight", "transformer.h.0.mlp.c_fc.weight")
	wpe, okP := get("wpe.weight", "transformer.wpe.weight")
	if !ok || !okP || len(fc.Shape) != 2 || layers == 0 {
		return nil, errors.New("gpt2-style names without wpe or layer-0 c_fc")
	}
	heads := max(1, h/64)
	m := &Model{Family: GPT2, ModelType: "gpt2", Hidden: h, Layers: layers, Heads: heads, KVHeads: heads,
		HeadDim: h / heads, Intermediate: int(fc.Shape[1]), Vocab: int(wte.Shape[0]),
		MaxPositions: int(wpe.Shape[0]), Activation: "gelu_new", Tied: true,
		AttentionDropout: 0.1, HiddenDropout: 0.1, EmbedDropout: 0.1}
	return m, m.Validate()
}
