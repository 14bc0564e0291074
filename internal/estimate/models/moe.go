package models

import "fmt"

// Mixture-of-experts decoders as transformers builds them: Llama-style
// attention (or DeepSeek-V2's multi-head latent attention) and, in the
// sparse layers, a router (mlp.gate, hidden -> experts), routed experts
// (each a gated MLP of ExpertIntermediate) and optionally shared experts
// that every token runs. The parameter counts are checked against the
// published totals in moe_test.go.
//
//	mixtral    MixtralSparseMoeBlock: 8 experts, top 2, no shared expert
//	qwen2_moe  Qwen2MoeSparseMoeBlock: 60/64 experts, shared_expert of
//	           shared_expert_intermediate_size behind a sigmoid gate
//	deepseek   DeepseekMoE (deepseek-moe-16b): 64 routed + 2 shared experts
//	           (one MLP of n_shared_experts * moe_intermediate_size), the
//	           first first_k_dense_replace layers dense
//	deepseek_v2 the same MoE with multi-head latent attention
//	qwen3_moe  Qwen3MoeSparseMoeBlock (Qwen3-30B-A3B, -235B-A22B): 128
//	           experts, top 8, no shared expert; Qwen3's attention (q/k
//	           RMSNorm per head, no q/k/v bias)

// MoESpec is the mixture-of-experts layout of a model.
type MoESpec struct {
	Experts            int `json:"experts"`
	TopK               int `json:"experts_per_token"`
	ExpertIntermediate int `json:"expert_intermediate_size"`
	// SharedIntermediate is the width of the shared-expert MLP every token
	// runs (0: none); SharedGate: Qwen2-MoE's sigmoid gate on it.
	SharedIntermediate int  `json:"shared_intermediate_size,omitempty"`
	SharedGate         bool `json:"shared_expert_gate,omitempty"`
	// DenseLayers are the layers with an ordinary MLP of Intermediate.
	DenseLayers []int `json:"dense_layers,omitempty"`
	// MLA is DeepSeek-V2's multi-head latent attention; nil: q/k/v/o.
	MLA *MLASpec `json:"mla,omitempty"`
}

// MLASpec: q (optionally through a low-rank q_a/q_b pair), a joint
// compressed key/value of KVLoraRank plus a shared rotary key, expanded by
// kv_b_proj to per-head keys (no-rope part) and values.
type MLASpec struct {
	QLoraRank  int `json:"q_lora_rank,omitempty"`
	KVLoraRank int `json:"kv_lora_rank"`
	QKNope     int `json:"qk_nope_head_dim"`
	QKRope     int `json:"qk_rope_head_dim"`
	VHeadDim   int `json:"v_head_dim"`
}

func init() {
	register(MoE, spec{params: moeParams, validate: validateMoE}, map[string]func(cfg) *Model{
		"mixtral": mixtralConfig, "qwen2_moe": qwen2MoEConfig, "qwen3_moe": qwen3MoEConfig,
		"deepseek": deepseekConfig, "deepseek_v2": deepseekConfig})
}

// Sparse reports whether layer i has routed experts.
func (s *MoESpec) Sparse(i int) bool {
	for _, d := range s.DenseLayers {
		if d == i {
			return false
		}
	}
	return true
}

func validateMoE(m *Model) error {
	s := m.MoE
	if s == nil {
		return fmt.Errorf("model %s: mixture-of-experts layout missing", m.Name)
	}
	if s.Experts <= 0 || s.Experts > 1<<12 || s.TopK <= 0 || s.TopK > s.Experts || s.ExpertIntermediate <= 0 || s.ExpertIntermediate > 1<<22 {
		return fmt.Errorf("model %s: experts %d, experts per token %d, expert intermediate size %d: want 1 <= per token <= experts and a positive size",
			m.Name, s.Experts, s.TopK, s.ExpertIntermediate)
	}
	if s.SharedIntermediate < 0 || s.SharedIntermediate > 1<<22 {
		return fmt.Errorf("model %s: shared expert size out of range", m.Name)
	}
	if a := s.MLA; a != nil && (a.KVLoraRank <= 0 || a.QKNope <= 0 || a.QKRope <= 0 || a.VHeadDim <= 0 || a.QLoraRank < 0) {
		return fmt.Errorf("model %s: kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim and v_head_dim must be positive", m.Name)
	}
	return nil
}

func moeParams(m *Model) []Param {
	var l plist
	h, s := m.Hidden, m.MoE
	l.add("embed_tokens.weight", -1, m.Tied, m.Vocab, h)
	for i := 0; i < m.Layers; i++ {
		l.norm("input_layernorm", i, h, false)
		if s.MLA != nil {
			mlaParams(&l, m, i)
		} else {
			q, kv := m.Heads*m.HeadDim, m.KVHeads*m.HeadDim
			l.linear("self_attn.q_proj", i, h, q, m.QKVBias)
			l.linear("self_attn.k_proj", i, h, kv, m.QKVBias)
			l.linear("self_attn.v_proj", i, h, kv, m.QKVBias)
			if m.QKNorm {
				l.norm("self_attn.q_norm", i, m.HeadDim, false)
				l.norm("self_attn.k_norm", i, m.HeadDim, false)
			}
			l.linear("self_attn.o_proj", i, q, h, false)
		}
		l.norm("post_attention_layernorm", i, h, false)
		if !s.Sparse(i) {
			gatedMLP(&l, "mlp", i, h, m.Intermediate)
			continue
		}
		l.linear("mlp.gate", i, h, s.Experts, false)
		for j := 0; j < s.Experts; j++ {
			gatedMLP(&l, fmt.Sprintf("mlp.experts.%d", j), i, h, s.ExpertIntermediate)
		}
		if s.SharedIntermediate > 0 {
			gatedMLP(&l, "mlp.shared_experts", i, h, s.SharedIntermediate)
		}
		if s.SharedGate {
			l.linear("mlp.shared_expert_gate", i, h, 1, false)
		}
	}
	l.norm("norm", -1, h, false)
	l.outputHead(m, h)
	return l
}

func gatedMLP(l *plist, name string, i, h, inter int) {
	l.linear(name+".gate_proj", i, h, inter, false)
	l.linear(name+".up_proj", i, h, inter, false)
	l.linear(name+".down_proj", i, inter, h, false)
}

// mlaParams is DeepseekV2Attention's weights.
func mlaParams(l *plist, m *Model, i int) {
	a, h, H := m.MoE.MLA, m.Hidden, m.Heads
	qk := a.QKNope + a.QKRope
	if a.QLoraRank > 0 {
		l.linear("self_attn.q_a_proj", i, h, a.QLoraRank, false)
		l.norm("self_attn.q_a_layernorm", i, a.QLoraRank, false)
		l.linear("self_attn.q_b_proj", i, a.QLoraRank, H*qk, false)
	} else {
		l.linear("self_attn.q_proj", i, h, H*qk, false)
	}
	l.linear("self_attn.kv_a_proj_with_mqa", i, h, a.KVLoraRank+a.QKRope, false)
	l.norm("self_attn.kv_a_layernorm", i, a.KVLoraRank, false)
	l.linear("self_attn.kv_b_proj", i, a.KVLoraRank, H*(a.QKNope+a.VHeadDim), false)
	l.linear("self_attn.o_proj", i, H*a.VHeadDim, h, false)
}

// ActiveParamCount is the parameters one token's forward uses: everything
// but the routed experts it is not sent to (the embedding and the output
// layer counted, as Mistral and Qwen count them). For a dense model it is
// ParamCount.
func (m *Model) ActiveParamCount() int64 {
	total := m.ParamCount()
	s := m.MoE
	if s == nil {
		return total
	}
	expert := int64(3) * int64(m.Hidden) * int64(s.ExpertIntermediate)
	idle := int64(0)
	for i := 0; i < m.Layers; i++ {
		if s.Sparse(i) {
			idle += int64(s.Experts-s.TopK) * expert
		}
	}
	return total - idle
}

// moeLlama is the Llama-style part every MoE config shares.
func moeLlama(c cfg, s *MoESpec) *Model {
	m := llamaConfig(c)
	m.Family, m.MoE = MoE, s
	return m
}

// mixtralConfig: MixtralConfig (num_local_experts, num_experts_per_tok;
// intermediate_size is each expert's width).
func mixtralConfig(c cfg) *Model {
	m := moeLlama(c, &MoESpec{Experts: c.int(8, "num_local_experts"), TopK: c.int(2, "num_experts_per_tok"),
		ExpertIntermediate: c.int(14336, "intermediate_size")})
	m.QKVBias = false
	return m
}

// qwen2MoEConfig: Qwen2MoeConfig.
func qwen2MoEConfig(c cfg) *Model {
	s := &MoESpec{Experts: c.int(60, "num_experts"), TopK: c.int(4, "num_experts_per_tok"),
		ExpertIntermediate: c.int(1408, "moe_intermediate_size"),
		SharedIntermediate: c.int(5632, "shared_expert_intermediate_size"), SharedGate: true}
	qwenDenseLayers(c, s)
	m := moeLlama(c, s)
	m.QKVBias = c.boolean(true, "qkv_bias") // Qwen2MoeAttention: bias on q, k, v
	return m
}

// qwen3MoEConfig: Qwen3MoeConfig, whose defaults are Qwen3-30B-A3B's
// (128 experts of 768, top 8); the sparse layers chosen as Qwen2-MoE's.
func qwen3MoEConfig(c cfg) *Model {
	// transformers 5 writes num_local_experts (its attribute_map's name);
	// the published configs say num_experts
	s := &MoESpec{Experts: c.int(128, "num_experts", "num_local_experts"), TopK: c.int(8, "num_experts_per_tok"),
		ExpertIntermediate: c.int(768, "moe_intermediate_size")}
	qwenDenseLayers(c, s)
	m := moeLlama(c, s)
	m.QKVBias, m.QKNorm = c.boolean(false, "attention_bias"), true
	return m
}

// qwenDenseLayers: Qwen2/3-MoE's dense layers. A layer is sparse when
// (i+1) is a multiple of decoder_sparse_step and i is not in
// mlp_only_layers.
func qwenDenseLayers(c cfg, s *MoESpec) {
	step := max(1, c.int(1, "decoder_sparse_step"))
	only := map[int]bool{}
	if a, ok := c["mlp_only_layers"].([]any); ok {
		for _, x := range a {
			if f, ok := x.(float64); ok {
				only[int(f)] = true
			}
		}
	}
	layers := c.int(24, "num_hidden_layers")
	for i := 0; i < layers && i < 1<<12; i++ {
		if only[i] || (i+1)%step != 0 {
			s.DenseLayers = append(s.DenseLayers, i)
		}
	}
}

// deepseekConfig: DeepseekConfig / DeepseekV2Config (remote code). A layer
// is sparse when i >= first_k_dense_replace and i % moe_layer_freq == 0.
// q_lora_rank null (V2-Lite) is a plain q_proj.
func deepseekConfig(c cfg) *Model {
	s := &MoESpec{Experts: c.int(64, "n_routed_experts"), TopK: c.int(6, "num_experts_per_tok"),
		ExpertIntermediate: c.int(1408, "moe_intermediate_size")}
	s.SharedIntermediate = c.int(0, "n_shared_experts") * s.ExpertIntermediate
	first, freq := c.int(1, "first_k_dense_replace"), max(1, c.int(1, "moe_layer_freq"))
	layers := c.int(28, "num_hidden_layers")
	for i := 0; i < layers && i < 1<<12; i++ {
		if i < first || i%freq != 0 {
			s.DenseLayers = append(s.DenseLayers, i)
		}
	}
	if mt, _ := c["model_type"].(string); mt == "deepseek_v2" {
		s.MLA = &MLASpec{QLoraRank: c.int(0, "q_lora_rank"), KVLoraRank: c.int(512, "kv_lora_rank"),
			QKNope: c.int(128, "qk_nope_head_dim"), QKRope: c.int(64, "qk_rope_head_dim"), VHeadDim: c.int(128, "v_head_dim")}
	}
	m := moeLlama(c, s)
	m.Intermediate = c.int(10944, "intermediate_size")
	m.QKVBias = c.boolean(false, "attention_bias")
	if s.MLA != nil {
		// The attention's head size for the walk's purposes: q and k are
		// nope+rope wide per head.
		m.HeadDim, m.KVHeads = s.MLA.QKNope+s.MLA.QKRope, m.Heads
	}
	return m
}
