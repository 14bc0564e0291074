#!/usr/bin/env bash
# QLoRA jobs traced (torchmem estimate --trace) against the built-in
# estimate (--peft qlora), peak allocated / reserved / process on an
# H100-80GB. Needs a python with torch >= 2.4, transformers 5, PEFT and
# bitsandbytes >= 0.46 importable (bitsandbytes' native library is not
# needed: its ops run as their fake kernels on the trace's meta tensors):
#   PY=/path/to/python3 bash bench/trace/qlora.sh WORKDIR
# WORKDIR receives a small Llama config and Llama-2-7B's, each with a
# sparse safetensors checkpoint (a valid header, no data on disk: 12.6 GB
# apparent for the 7B) for from_pretrained, which the trace does not read.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
T=${TORCHMEM:-torchmem}
PY=${PY:-python3}
work=${1:?usage: PY=python3 bash bench/trace/qlora.sh WORKDIR}
mkdir -p "$work" && cd "$work"
export HF_HOME=$work/hf_home
"$PY" - <<'PYEOF'
import json, os
import torch
from transformers import AutoModelForCausalLM, LlamaConfig, MistralConfig
shapes = {"llama-small": dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=8,
                              num_attention_heads=16, num_key_value_heads=4, max_position_embeddings=2048),
          "llama-7b": dict(hidden_size=4096, intermediate_size=11008, num_hidden_layers=32,
                           num_attention_heads=32, num_key_value_heads=32, max_position_embeddings=4096),
          "mistral-7b": dict(hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                             num_attention_heads=32, num_key_value_heads=8, max_position_embeddings=32768,
                             sliding_window=4096, rms_norm_eps=1e-5)}
for d, kw in shapes.items():
    if os.path.exists(os.path.join(d, "model.safetensors")):
        continue
    cfg = (MistralConfig if d.startswith("mistral") else LlamaConfig)(vocab_size=32000, **kw)
    cfg.save_pretrained(d)
    with torch.device("meta"):
        m = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
    hdr, off = {}, 0
    for k, v in m.state_dict().items():
        n = v.numel() * v.element_size()
        hdr[k] = {"dtype": "BF16", "shape": list(v.shape), "data_offsets": [off, off + n]}
        off += n
    hdr["__metadata__"] = {"format": "pt"}
    h = json.dumps(hdr).encode()
    h += b" " * (-len(h) % 8)
    with open(os.path.join(d, "model.safetensors"), "wb") as f:
        f.write(len(h).to_bytes(8, "little"))
        f.write(h)
        f.truncate(8 + len(h) + off)
PYEOF
peaks() { "$PY" -c 'import json,sys; d=json.load(sys.stdin); b={i["name"]: i["bytes"] for i in d["breakdown"]}; print("%.4f / %.4f / %.4f GiB, paged %.1f MiB" % (d["peak_allocated_bytes"]/2**30, d["peak_reserved_bytes"]/2**30, d["process_bytes"]/2**30, b.get("paged_optimizer_states", 0)/2**20))'; }
row() { # label, model dir, batch, seq, Trainer optim, built-in optimizer, rank, quant (nf4|int8)
	local label=$1 model=$2 batch=$3 seq=$4 optim=$5 opt=$6 r=$7 q=$8 a b qflag=--quant-double
	[ "$q" = int8 ] && qflag="--quant int8"
	a=$("$T" estimate --trace --steps 2 --gpu H100-80GB --json -- "$PY" "$here/qlora_trainer.py" "$model" \
		"$batch" "$seq" 1 "$optim" "$r" "$q" 2>/dev/null | peaks)
	# transformers 5's gradient checkpointing is use_reentrant=False
	b=$("$T" estimate --config "$model/config.json" --batch "$batch" --seq "$seq" --precision amp-bf16 \
		--checkpointing --use-reentrant=false --attention sdpa --peft qlora $qflag --lora-r "$r" \
		--lora-alpha $((2 * r)) --lora-dropout 0.05 --lora-targets all-linear --optimizer "$opt" \
		--gpu H100-80GB --json 2>/dev/null | peaks)
	echo "| $label | $a | $b |"
}
echo "| job (Trainer, bf16, checkpointing, LoRA all-linear) | trace: allocated / reserved / process | built-in --peft qlora |"
echo "|---|---:|---:|"
row "Llama-style 156M nf4, 4 x 1024, r 16, adamw_torch" llama-small 4 1024 adamw_torch adamw 16 nf4
row "same, LLM.int8 base" llama-small 4 1024 adamw_torch adamw 16 int8
row "Llama-2-7B nf4, 4 x 1024, r 64, adamw_torch" llama-7b 4 1024 adamw_torch adamw 64 nf4
row "same, paged_adamw_32bit" llama-7b 4 1024 paged_adamw_32bit paged-adamw 64 nf4
row "same, paged_adamw_8bit" llama-7b 4 1024 paged_adamw_8bit paged-adamw-8bit 64 nf4
row "Llama-2-7B nf4, 4 x 1024, r 16, adamw_torch" llama-7b 4 1024 adamw_torch adamw 16 nf4
row "same, paged_adamw_8bit" llama-7b 4 1024 paged_adamw_8bit paged-adamw-8bit 16 nf4

# fms-acceleration's published A100-80GB peaks (refs/a100_80gb.csv at
# 24bdadb: transformers 4.48.1, peft 0.13.2, bitsandbytes 0.43.3, torch 2.4.1)
fms() { # label, batch, mode, measured peak allocated (GB)
	local a
	a=$("$T" estimate --trace --steps 2 --gpu A100-80GB --json -- "$PY" "$here/qlora_fms.py" mistral-7b "$2" "$3" \
		2>/dev/null | "$PY" -c 'import json,sys; d=json.load(sys.stdin); m='"$4"'; a=d["peak_allocated_bytes"]/1e9; print("%.3f GB | %+.1f %% | %d MiB" % (a, 100*(a/m-1), d["process_bytes"]/2**20))')
	echo "| $1 | $4 GB | $a |"
}
echo
echo "| fms-acceleration scenario, batch | measured peak allocated | trace | difference | trace process |"
echo "|---|---:|---:|---:|---:|"
fms "baseline-peft-bnb, 4" 4 baseline 20.669
fms "baseline-peft-bnb, 8" 8 baseline 37.003
fms "accelerated-peft-bnb, 4" 4 accelerated 16.374
fms "accelerated-peft-bnb, 8" 8 accelerated 28.412
