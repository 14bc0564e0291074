#!/usr/bin/env bash
# Every causal-LM family named below, as transformers itself builds it from
# a small config (2 layers, 256 wide, 4 heads, 2 KV heads, 4 experts top-2
# where there are experts), trained by bench/trace/hf_trainer.py under
# `torchmem estimate --trace` (bf16=True, batch 2 x 256): how each trace
# ended, its peak allocated and the kinds of notes it made. Needs a python
# with torch >= 2.1, transformers and accelerate:
#   PY=/path/to/python3 CKPT=1 bash bench/trace/hf_families.sh WORKDIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
T=${TORCHMEM:-torchmem}
PY=${PY:-python3}
work=${1:?usage: PY=python3 bash bench/trace/hf_families.sh WORKDIR}
families=${FAMILIES:-"bloom cohere deepseek_v2 deepseek_v3 ernie4_5 falcon gemma gemma2 gemma3_text glm4 glm4_moe
gpt_neox gpt_oss gptj granite granitemoe hunyuan_v1_dense llama llama4_text minimax mistral mixtral olmo2 opt phi
phi3 qwen2 qwen2_moe qwen3 qwen3_moe qwen3_next smollm3 stablelm starcoder2"}
mkdir -p "$work" && cd "$work"
export HF_HOME=$work/hf_home
# shellcheck disable=SC2086
"$PY" - $families <<'PY'
import sys
from transformers.models.auto.configuration_auto import CONFIG_MAPPING

small = dict(vocab_size=1000, hidden_size=256, intermediate_size=512, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=512, head_dim=64, num_local_experts=4, num_experts=4,
             num_experts_per_tok=2, moe_intermediate_size=128, n_routed_experts=4, n_shared_experts=1,
             first_k_dense_replace=1, kv_lora_rank=64, q_lora_rank=96, qk_rope_head_dim=32, qk_nope_head_dim=32,
             v_head_dim=64, n_group=1, topk_group=1, shared_expert_intermediate_size=128, decoder_sparse_step=1,
             sliding_window=128, bos_token_id=1, eos_token_id=1, pad_token_id=1)
for t in sys.argv[1:]:
    cls = CONFIG_MAPPING[t]
    defaults = cls()
    kw = {k: v for k, v in small.items() if hasattr(defaults, k)}
    if isinstance(getattr(cls, "head_dim", None), property):
        kw.pop("head_dim")
    if t == "deepseek_v3":  # its rotary runs over head_dim = qk_rope_head_dim
        kw["head_dim"] = kw["qk_rope_head_dim"]
    cls(**kw).save_pretrained(t)
PY
for t in $families; do
	r=$("$T" estimate --trace --steps 2 --gpu H100-80GB --json -- "$PY" "$here/hf_trainer.py" "cfg:$t" 2 256 "${CKPT:-1}" 2>/dev/null |
		"$PY" -c 'import json, sys
d = json.load(sys.stdin)
e = d.get("end") or {}
notes = ",".join(sorted({w["kind"] for w in d.get("warnings") or []}))
print("| %s | %.1f MiB | %s | %s |" % (e.get("kind"), d["peak_allocated_bytes"] / 2**20,
      (e.get("op", "") + " " + (e.get("message") or ""))[:120] if e.get("kind") != "steps" else "", notes))' ||
		echo "| no report | | | |")
	echo "| $t $r"
done
