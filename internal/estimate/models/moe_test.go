package models

import (
	"math"
	"strings"
	"testing"
)

// TestMoEParamCounts: total and active parameters of the built-in MoE
// models against the published figures, each to the precision it was
// published with (a decimal of a billion, or the billion; rounded or
// truncated). Sources:
//   - Mixtral-8x7B: 46.7B total, 12.9B per token (mistral.ai/news/mixtral-of-experts,
//     repeated in the model card); config: num_local_experts 8, num_experts_per_tok 2.
//   - Qwen1.5-MoE-A2.7B: 14.3B total, 2.7B activated (huggingface.co/Qwen/Qwen1.5-MoE-A2.7B
//     model card); config: 60 experts, top 4, moe_intermediate_size 1408, shared 5632.
//   - Qwen2-57B-A14B: 57B total, 14B activated (the model card and its
//     name, to the billion).
//   - deepseek-moe-16b-base: 16.4B total, 2.8B activated (DeepSeekMoE paper,
//     arXiv:2401.06066, table 1; a GGUF card gives 16.38B).
//   - Qwen3-30B-A3B: 30.5B total, 3.3B activated (huggingface.co/Qwen/Qwen3-30B-A3B
//     model card); config.json as published (transformers 4.51.0): 48 layers,
//     2048 wide, head_dim 128, 128 experts of 768, top 8, untied.
//   - DeepSeek-V2-Lite: 15.7B total, 2.4B activated (DeepSeek-V2 paper,
//     arXiv:2405.04434, appendix B). The paper counts the vocabulary
//     matrices once (input embedding and output layer share a count), so
//     its 2.4B is compared with the active count less the input embedding.
//
// The presets' config values were read from public copies of each
// config.json: MixtralConfig as printed by transformers for
// Mixtral-8x7B-Instruct-v0.1; Qwen1.5-MoE-A2.7B-Chat-GPTQ-Int4's model card
// (the same architecture block); DeepseekConfig's defaults in
// deepseek-moe-16b's remote code; DeepSeek-V2-Lite's values as a Megatron
// recipe repeats them (27 layers, q_lora_rank null, kv_lora_rank 512,
// 64 routed + 2 shared experts of 1408, first layer dense).
func TestMoEParamCounts(t *testing.T) {
	for _, c := range []struct {
		name            string
		total, active   float64 // billions, as published
		decimals        int     // the precision they were published with
		activeLessEmbed bool
	}{
		{"mistralai/Mixtral-8x7B-v0.1", 46.7, 12.9, 1, false},
		{"Qwen/Qwen1.5-MoE-A2.7B", 14.3, 2.7, 1, false},
		{"Qwen/Qwen2-57B-A14B", 57, 14, 0, false},
		{"Qwen/Qwen3-30B-A3B", 30.5, 3.3, 1, false},
		{"deepseek-ai/deepseek-moe-16b-base", 16.4, 2.8, 1, false},
		{"deepseek-ai/DeepSeek-V2-Lite", 15.7, 2.4, 1, true},
	} {
		m, err := Preset(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if m.Family != MoE {
			t.Errorf("%s: family %s", c.name, m.Family)
		}
		total, active := float64(m.ParamCount())/1e9, float64(m.ActiveParamCount())/1e9
		if c.activeLessEmbed {
			active -= float64(m.Vocab*m.Hidden) / 1e9
		}
		t.Logf("%-36s total %.3fB active %.3fB", c.name, total, active)
		if !published(total, c.total, c.decimals) {
			t.Errorf("%s: %.3fB parameters, published %.1fB", c.name, total, c.total)
		}
		if !published(active, c.active, c.decimals) {
			t.Errorf("%s: %.3fB active, published %.1fB", c.name, active, c.active)
		}
	}
}

// published: x rounds or truncates to p, a figure given to d decimals.
func published(x, p float64, d int) bool {
	f := math.Pow(10, float64(d))
	return math.Abs(math.Round(x*f)/f-p) < 1e-9 || math.Abs(math.Floor(x*f)/f-p) < 1e-9
}

// TestMoELayout: which layers are sparse, and the configs' checks.
func TestMoELayout(t *testing.T) {
	m, err := Preset("deepseek-moe-16b-base")
	if err != nil {
		t.Fatal(err)
	}
	if m.MoE.Sparse(0) || !m.MoE.Sparse(1) || m.MoE.SharedIntermediate != 2*1408 {
		t.Errorf("deepseek: layer 0 dense, the rest sparse, shared 2x1408: %+v", m.MoE)
	}
	q, err := FromConfigMap(map[string]any{"model_type": "qwen2_moe", "num_hidden_layers": 4.0,
		"decoder_sparse_step": 2.0, "mlp_only_layers": []any{3.0}})
	if err != nil {
		t.Fatal(err)
	}
	// (i+1) % 2 == 0 -> 1 and 3 sparse; 3 is mlp-only.
	for i, want := range []bool{false, true, false, false} {
		if q.MoE.Sparse(i) != want {
			t.Errorf("qwen2_moe layer %d sparse %v, want %v", i, q.MoE.Sparse(i), want)
		}
	}
	// Qwen3-MoE as transformers 5 writes it (num_local_experts): no shared
	// expert, q/k RMSNorm per head, and the same dense-layer rule.
	q3, err := FromConfigMap(map[string]any{"model_type": "qwen3_moe", "num_hidden_layers": 2.0, "hidden_size": 64.0,
		"num_attention_heads": 4.0, "num_key_value_heads": 2.0, "num_local_experts": 16.0, "num_experts_per_tok": 4.0,
		"moe_intermediate_size": 32.0, "vocab_size": 100.0, "mlp_only_layers": []any{1.0}})
	if err != nil {
		t.Fatal(err)
	}
	if s := q3.MoE; s.Experts != 16 || s.TopK != 4 || s.SharedIntermediate != 0 || s.SharedGate || !s.Sparse(0) || s.Sparse(1) || !q3.QKNorm || q3.QKVBias {
		t.Errorf("qwen3_moe: %+v, qk_norm %v, qkv bias %v: want 16 experts, top 4, no shared expert, layer 1 dense, q/k norms",
			*s, q3.QKNorm, q3.QKVBias)
	}
	norms := 0
	for _, p := range q3.Params() {
		if strings.HasSuffix(p.Name, "q_norm.weight") || strings.HasSuffix(p.Name, "k_norm.weight") {
			norms++
		}
	}
	if norms != 4 {
		t.Errorf("%d q/k norm weights, want 4 (2 layers)", norms)
	}
	if _, err := FromConfigMap(map[string]any{"model_type": "mixtral", "num_experts_per_tok": 9.0}); err == nil {
		t.Error("top-9 of 8 experts accepted")
	}
	if _, err := FromConfigMap(map[string]any{"model_type": "mixtral", "num_local_experts": "8"}); err == nil {
		t.Error("a string expert count accepted")
	}
	d, _ := Preset("llama-3.1-8b")
	if d.ActiveParamCount() != d.ParamCount() {
		t.Error("a dense model's active count differs from its total")
	}
}
