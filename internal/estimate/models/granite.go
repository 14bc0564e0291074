package models

// Granite is IBM's Granite/PowerLM decoder as transformers builds it
// (GraniteForCausalLM, src/transformers/models/granite/modeling_granite.py
// and configuration_granite.py): Llama's modules and tensor shapes
// (embed_tokens, q/k/v/o_proj, gate/up/down_proj, two RMSNorms a layer,
// norm, lm_head) with four scalar multipliers read from config.json
// (embedding_multiplier, attention_multiplier, residual_multiplier,
// logits_scaling). The scalars are no parameters; what they allocate is
// the estimator's (estimate/granite.go).
const Granite Family = "granite"

func init() {
	register(Granite, spec{params: graniteParams}, map[string]func(cfg) *Model{"granite": graniteConfig})
}

// graniteParams: GraniteAttention's o_proj has attention_bias like q, k
// and v (LlamaAttention's does too; llamaParams leaves o_proj's out because
// no Llama-style config sets attention_bias with it), and GraniteMLP has
// mlp_bias on all three projections.
func graniteParams(m *Model) []Param {
	l := plist(llamaParams(m))
	if !m.QKVBias && !m.MLPBias {
		return l
	}
	var out plist
	for _, p := range l {
		out = append(out, p)
		if p.Block < 0 {
			continue
		}
		switch {
		case m.QKVBias && p.Name == "self_attn.o_proj.weight":
			out.add("self_attn.o_proj.bias", p.Block, false, m.Hidden)
		case m.MLPBias && (p.Name == "mlp.gate_proj.weight" || p.Name == "mlp.up_proj.weight"):
			out.add(p.Name[:len(p.Name)-len("weight")]+"bias", p.Block, false, m.Intermediate)
		case m.MLPBias && p.Name == "mlp.down_proj.weight":
			out.add("mlp.down_proj.bias", p.Block, false, m.Hidden)
		}
	}
	return out
}

// graniteConfig: GraniteConfig. head_dim is hidden_size /
// num_attention_heads (GraniteAttention ignores a head_dim key);
// tie_word_embeddings defaults to false, attention_bias and mlp_bias too.
func graniteConfig(c cfg) *Model {
	m := llamaConfig(c)
	m.Family = Granite
	m.HeadDim = safeDiv(m.Hidden, m.Heads)
	m.Tied = c.boolean(false, "tie_word_embeddings")
	m.QKVBias = c.boolean(false, "attention_bias")
	m.MLPBias = c.boolean(false, "mlp_bias")
	return m
}
