#!/usr/bin/env bash
# bench/trace/hf_trainer.py traced (torchmem estimate --trace) against the
# built-in estimate of the same job, peak allocated / reserved on an
# H100-80GB. Needs a python with torch >= 2.1, transformers and accelerate:
#   PY=/path/to/python3 bash bench/trace/hf_trainer.sh WORKDIR
# WORKDIR receives a small Llama saved with real weights (from_pretrained
# reads it) and GPT-2's default config. `accelerate launch` runs through a
# wrapper for PY, as the console script would.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
T=${TORCHMEM:-torchmem}
PY=${PY:-python3}
work=${1:?usage: PY=python3 bash bench/trace/hf_trainer.sh WORKDIR}
mkdir -p "$work" && cd "$work"
export HF_HOME=$work/hf_home
if [ ! -f llama-small/config.json ]; then
	"$PY" -c '
from transformers import LlamaConfig, LlamaForCausalLM, GPT2Config
c = LlamaConfig(vocab_size=32000, hidden_size=1024, intermediate_size=2816, num_hidden_layers=8,
                num_attention_heads=16, num_key_value_heads=4, max_position_embeddings=2048)
LlamaForCausalLM(c).save_pretrained("llama-small")
GPT2Config().save_pretrained("gpt2cfg")'
fi
if [ ! -f qwen3moe-small/config.json ]; then
	"$PY" -c '
from transformers import MixtralConfig, Qwen3MoeConfig
MixtralConfig(vocab_size=32000, hidden_size=1024, intermediate_size=2048, num_hidden_layers=4, num_attention_heads=16,
              num_key_value_heads=4, num_local_experts=8, num_experts_per_tok=2).save_pretrained("mixtral-small")
Qwen3MoeConfig(vocab_size=32000, hidden_size=1024, intermediate_size=2048, moe_intermediate_size=512, num_hidden_layers=4,
               num_attention_heads=16, num_key_value_heads=4, num_experts=16, num_experts_per_tok=4,
               decoder_sparse_step=1).save_pretrained("qwen3moe-small")'
fi
printf '#!%s\nimport sys\nfrom accelerate.commands.accelerate_cli import main\nsys.exit(main())\n' "$(command -v "$PY")" > accelerate
chmod +x accelerate
peaks() { "$PY" -c 'import json,sys; d=json.load(sys.stdin); print("%.4f / %.4f GiB" % (d["peak_allocated_bytes"]/2**30, d["peak_reserved_bytes"]/2**30))'; }
row() { # label, the traced command, --, the built-in's flags
	local label=$1 cmd=()
	shift
	while [ "$1" != "--" ]; do cmd+=("$1"); shift; done
	shift
	a=$("$T" estimate --trace --steps 2 --gpu H100-80GB --json -- "${cmd[@]}" 2>/dev/null | peaks)
	b=$("$T" estimate "$@" --gpu H100-80GB --json 2>/dev/null | peaks 2>/dev/null || echo "not a built-in model")
	echo "| $label | $a | $b |"
}
echo "| job | trace | built-in |"
echo "|---|---:|---:|"
row "GPT-2 124M from_config, 8 x 1024" "$PY" "$here/hf_trainer.py" cfg:gpt2cfg 8 1024 0 -- \
	--config gpt2cfg/config.json --batch 8 --seq 1024 --precision amp-bf16 --attention sdpa
row "same, gradient checkpointing" "$PY" "$here/hf_trainer.py" cfg:gpt2cfg 8 1024 1 -- \
	--config gpt2cfg/config.json --batch 8 --seq 1024 --precision amp-bf16 --attention sdpa --checkpointing
row "Llama-style 156M from_pretrained (fp32), 4 x 1024, checkpointing" "$PY" "$here/hf_trainer.py" llama-small 4 1024 1 -- \
	--config llama-small/config.json --batch 4 --seq 1024 --precision amp-bf16 --attention sdpa --checkpointing
row "same, from_pretrained(dtype=torch.bfloat16)" "$PY" "$here/hf_trainer.py" llama-small 4 1024 1 bf16 -- \
	--config llama-small/config.json --batch 4 --seq 1024 --precision bf16 --attention sdpa --checkpointing
row "same fp32, accelerate launch --multi_gpu --num_processes 8" ./accelerate launch --multi_gpu --num_processes 8 \
	--mixed_precision bf16 "$here/hf_trainer.py" llama-small 4 1024 1 -- \
	--config llama-small/config.json --batch 4 --seq 1024 --precision amp-bf16 --attention sdpa --checkpointing --ddp --world-size 8
row "Mixtral-style, 8 experts top-2, 4 layers, from_config, 4 x 1024, checkpointing" "$PY" "$here/hf_trainer.py" cfg:mixtral-small 4 1024 1 -- \
	--config mixtral-small/config.json --batch 4 --seq 1024 --precision amp-bf16 --attention sdpa --checkpointing
row "Qwen3-MoE-style, 16 experts top-4, 4 layers, from_config, 4 x 1024, checkpointing" "$PY" "$here/hf_trainer.py" cfg:qwen3moe-small 4 1024 1 -- \
	--config qwen3moe-small/config.json --batch 4 --seq 1024 --precision amp-bf16 --attention sdpa --checkpointing
