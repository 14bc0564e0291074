package models

// Parameter layouts of the transformer families, in the modules' order
// (which is the order PyTorch allocates weights, gradients and states in).

func init() {
	register(GPT2, spec{params: gpt2Params}, map[string]func(cfg) *Model{"gpt2": gpt2Config})
	register(Llama, spec{params: llamaParams}, map[string]func(cfg) *Model{
		"llama": llamaConfig, "mistral": llamaConfig, "qwen2": llamaConfig, "qwen3": llamaConfig,
		"gemma": llamaConfig, "gemma2": llamaConfig, "olmo": llamaConfig, "olmo2": llamaConfig})
	register(BERT, spec{params: bertParams}, map[string]func(cfg) *Model{
		"bert": bertConfig, "roberta": bertConfig, "xlm-roberta": bertConfig, "camembert": bertConfig})
	register(T5, spec{params: t5Params, blocks: func(m *Model) int { return m.Layers + m.DecoderLayers }},
		map[string]func(cfg) *Model{"t5": t5Config, "mt5": t5Config, "umt5": t5Config})
}

func gpt2Params(m *Model) []Param {
	var l plist
	h := m.Hidden
	l.add("wte.weight", -1, m.Tied, m.Vocab, h)
	l.add("wpe.weight", -1, false, m.MaxPositions, h)
	for i := 0; i < m.Layers; i++ {
		l.norm("ln_1", i, h, true)
		l.linear("attn.c_attn", i, h, 3*h, true)
		l.linear("attn.c_proj", i, h, h, true)
		l.norm("ln_2", i, h, true)
		l.linear("mlp.c_fc", i, h, m.Intermediate, true)
		l.linear("mlp.c_proj", i, m.Intermediate, h, true)
	}
	l.norm("ln_f", -1, h, true)
	l.outputHead(m, h)
	return l
}

// outputHead is the language-model head (absent when tied) or a sequence
// classifier's score layer.
func (l *plist) outputHead(m *Model, h int) {
	switch {
	case m.SeqClassification:
		l.linear("score", -1, h, m.Classes, false)
	case !m.Tied:
		l.linear("lm_head", -1, h, m.Vocab, false)
	}
}

func llamaParams(m *Model) []Param {
	var l plist
	h, q, kv := m.Hidden, m.Heads*m.HeadDim, m.KVHeads*m.HeadDim
	l.add("embed_tokens.weight", -1, m.Tied, m.Vocab, h)
	for i := 0; i < m.Layers; i++ {
		l.norm("input_layernorm", i, h, false)
		l.linear("self_attn.q_proj", i, h, q, m.QKVBias)
		l.linear("self_attn.k_proj", i, h, kv, m.QKVBias)
		l.linear("self_attn.v_proj", i, h, kv, m.QKVBias)
		if m.QKNorm {
			l.norm("self_attn.q_norm", i, m.HeadDim, false)
			l.norm("self_attn.k_norm", i, m.HeadDim, false)
		}
		l.linear("self_attn.o_proj", i, q, h, false)
		l.norm("post_attention_layernorm", i, h, false)
		l.linear("mlp.gate_proj", i, h, m.Intermediate, false)
		l.linear("mlp.up_proj", i, h, m.Intermediate, false)
		l.linear("mlp.down_proj", i, m.Intermediate, h, false)
	}
	l.norm("norm", -1, h, false)
	l.outputHead(m, h)
	return l
}

// bertParams is BertForMaskedLM / RobertaForMaskedLM (no pooler): the
// decoder weight is tied to the word embeddings and has its own bias; or
// *ForSequenceClassification: pooler and classifier.
func bertParams(m *Model) []Param {
	var l plist
	h, I := m.Hidden, m.Intermediate
	l.add("word_embeddings.weight", -1, m.Tied, m.Vocab, h)
	l.add("position_embeddings.weight", -1, false, m.MaxPositions, h)
	if m.TypeVocab > 0 {
		l.add("token_type_embeddings.weight", -1, false, m.TypeVocab, h)
	}
	l.norm("embeddings.LayerNorm", -1, h, true)
	for i := 0; i < m.Layers; i++ {
		l.linear("attention.self.query", i, h, h, true)
		l.linear("attention.self.key", i, h, h, true)
		l.linear("attention.self.value", i, h, h, true)
		l.linear("attention.output.dense", i, h, h, true)
		l.norm("attention.output.LayerNorm", i, h, true)
		l.linear("intermediate.dense", i, h, I, true)
		l.linear("output.dense", i, I, h, true)
		l.norm("output.LayerNorm", i, h, true)
	}
	if m.SeqClassification {
		l.linear("pooler.dense", -1, h, h, true)
		l.linear("classifier", -1, h, m.Classes, true)
		return l
	}
	l.linear("cls.predictions.transform.dense", -1, h, h, true)
	l.norm("cls.predictions.transform.LayerNorm", -1, h, true)
	if !m.Tied {
		l.add("cls.predictions.decoder.weight", -1, true, m.Vocab, h)
	}
	l.add("cls.predictions.bias", -1, false, m.Vocab)
	return l
}

func t5Params(m *Model) []Param {
	var l plist
	d, inner := m.Hidden, m.Heads*m.HeadDim
	const buckets = 32
	l.add("shared.weight", -1, m.Tied, m.Vocab, d)
	attn := func(name string, blk int) {
		for _, p := range []string{"q", "k", "v"} {
			l.linear(name+"."+p, blk, d, inner, false)
		}
		l.linear(name+".o", blk, inner, d, false)
	}
	ff := func(blk int) {
		if m.Gated {
			l.linear("DenseReluDense.wi_0", blk, d, m.Intermediate, false)
			l.linear("DenseReluDense.wi_1", blk, d, m.Intermediate, false)
		} else {
			l.linear("DenseReluDense.wi", blk, d, m.Intermediate, false)
		}
		l.linear("DenseReluDense.wo", blk, m.Intermediate, d, false)
	}
	for i := 0; i < m.Layers; i++ {
		attn("encoder.SelfAttention", i)
		if i == 0 {
			l.add("encoder.relative_attention_bias.weight", i, false, buckets, m.Heads)
		}
		l.norm("encoder.layer_norm0", i, d, false)
		ff(i)
		l.norm("encoder.layer_norm1", i, d, false)
	}
	l.norm("encoder.final_layer_norm", -1, d, false)
	for j := 0; j < m.DecoderLayers; j++ {
		i := m.Layers + j
		attn("decoder.SelfAttention", i)
		if j == 0 {
			l.add("decoder.relative_attention_bias.weight", i, false, buckets, m.Heads)
		}
		l.norm("decoder.layer_norm0", i, d, false)
		attn("decoder.EncDecAttention", i)
		l.norm("decoder.layer_norm1", i, d, false)
		ff(i)
		l.norm("decoder.layer_norm2", i, d, false)
	}
	l.norm("decoder.final_layer_norm", -1, d, false)
	if !m.Tied {
		l.linear("lm_head", -1, d, m.Vocab, false)
	}
	return l
}
