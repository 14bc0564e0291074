#!/usr/bin/env bash
# DeepSpeed jobs traced (torchmem estimate --trace) against the built-in
# estimate (--zero S --world-size 8), peak allocated / reserved on an
# H100-80GB, as rank 0 of 8 under torchrun. Needs a python with torch >=
# 2.1, transformers, accelerate and DeepSpeed importable:
#   PY=/path/to/python3 bash bench/trace/deepspeed.sh WORKDIR
# The ZeRO configs are LLaMA-Factory's examples/deepspeed/ds_z{2,3}_config
# and ds_z3_offload_config (their values, written here); the Trainer fills
# their "auto" fields. WORKDIR receives them, a small Llama config and
# Llama-2-7B's.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
T=${TORCHMEM:-torchmem}
PY=${PY:-python3}
work=${1:?usage: PY=python3 bash bench/trace/deepspeed.sh WORKDIR}
mkdir -p "$work" && cd "$work"
export HF_HOME=$work/hf_home
"$PY" - <<'PYEOF'
import json, os
common = {"train_batch_size": "auto", "train_micro_batch_size_per_gpu": "auto",
          "gradient_accumulation_steps": "auto", "gradient_clipping": "auto",
          "zero_allow_untested_optimizer": True,
          "fp16": {"enabled": "auto", "loss_scale": 0, "loss_scale_window": 1000, "initial_scale_power": 16,
                   "hysteresis": 2, "min_loss_scale": 1},
          "bf16": {"enabled": "auto"}}
z2 = {"stage": 2, "allgather_partitions": True, "allgather_bucket_size": 5e8, "overlap_comm": False,
      "reduce_scatter": True, "reduce_bucket_size": 5e8, "contiguous_gradients": True, "round_robin_gradients": True}
z3 = {"stage": 3, "overlap_comm": False, "contiguous_gradients": True, "sub_group_size": 1e9,
      "reduce_bucket_size": "auto", "stage3_prefetch_bucket_size": "auto",
      "stage3_param_persistence_threshold": "auto", "stage3_max_live_parameters": 1e9,
      "stage3_max_reuse_distance": 1e9, "stage3_gather_16bit_weights_on_model_save": True}
off = dict(z3, offload_optimizer={"device": "cpu", "pin_memory": True},
           offload_param={"device": "cpu", "pin_memory": True})
for name, z in (("ds_z2_config", z2), ("ds_z3_config", z3), ("ds_z3_offload_config", off)):
    json.dump(dict(common, zero_optimization=z), open(name + ".json", "w"), indent=1)
from transformers import LlamaConfig
if not os.path.exists("llama-small/config.json"):
    LlamaConfig(vocab_size=32000, hidden_size=1024, intermediate_size=2816, num_hidden_layers=8,
                num_attention_heads=16, num_key_value_heads=4, max_position_embeddings=2048).save_pretrained("llama-small")
if not os.path.exists("llama-7b/config.json"):
    LlamaConfig(vocab_size=32000, hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                num_attention_heads=32, num_key_value_heads=32, max_position_embeddings=4096).save_pretrained("llama-7b")
PYEOF
peaks() { "$PY" -c 'import json,sys; d=json.load(sys.stdin); print("%.4f / %.4f GiB, %s" % (d["peak_allocated_bytes"]/2**30, d["peak_reserved_bytes"]/2**30, d["peak_phase"]))'; }
row() { # label, ZeRO stage, config, model dir, batch, seq, the bucket the config makes (elements; - : offload)
	local label=$1 stage=$2 cfg=$3 model=$4 batch=$5 seq=$6 bucket=$7 a b
	a=$("$T" estimate --trace --steps 2 --gpu H100-80GB --json -- "$PY" -m torch.distributed.run --nproc-per-node 8 \
		"$here/hf_trainer.py" "cfg:$model" "$batch" "$seq" 1 - "$cfg.json" 2>/dev/null | peaks)
	b="not modelled (offload)"
	if [ "$bucket" != - ]; then
		b=$("$T" estimate --config "$model/config.json" --batch "$batch" --seq "$seq" --precision bf16 --attention sdpa \
			--checkpointing --zero "$stage" --zero-bucket "$bucket" --world-size 8 --gpu H100-80GB --json 2>/dev/null | peaks)
	fi
	echo "| $label | $a | $b |"
}
echo "| job (Trainer, bf16, checkpointing, rank 0 of 8) | trace | built-in --zero S --world-size 8 |"
echo "|---|---:|---:|"
# ds_z2_config sets reduce_bucket_size 5e8; ds_z3_config's "auto" is hidden_size²
row "Llama-style 156M, 4 x 1024, ds_z2_config" 2 ds_z2_config llama-small 4 1024 500000000
row "same, ds_z3_config" 3 ds_z3_config llama-small 4 1024 1048576
row "same, ds_z3_offload_config" 3 ds_z3_offload_config llama-small 4 1024 -
row "Llama-2-7B shape, 1 x 2048, ds_z2_config" 2 ds_z2_config llama-7b 1 2048 500000000
row "same, ds_z3_config" 3 ds_z3_config llama-7b 1 2048 16777216
row "same, ds_z3_offload_config" 3 ds_z3_offload_config llama-7b 1 2048 -
