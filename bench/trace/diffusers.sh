#!/usr/bin/env bash
# diffusers' DreamBooth and LoRA examples traced (torchmem estimate --trace)
# for Stable Diffusion 1.5, SDXL and Flux.1-dev, unmodified. Needs a python with torch
# >= 2.4, transformers 5, accelerate, PEFT and bitsandbytes >= 0.46
# importable, and a diffusers checkout (its src/ and examples/):
#   PY=/path/to/python3 DIFFUSERS=/path/to/diffusers bash bench/trace/diffusers.sh WORKDIR
# WORKDIR receives the three model folders (bench/trace/diffusers_models.py:
# the published configs, sparse checkpoints the trace never reads: Flux's
# transformer is 47.6 GB, more than most hosts can map, which the trace
# reads from its header) and five random 512x512 JPEGs as the instance (and
# class) images.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
T=${TORCHMEM:-torchmem}
PY=${PY:-python3}
D=${DIFFUSERS:?set DIFFUSERS to a diffusers checkout}
work=${1:?usage: PY=python3 DIFFUSERS=DIR bash bench/trace/diffusers.sh WORKDIR}
mkdir -p "$work" && cd "$work"
# tokenizers 0.23 (Debian unstable) renamed RobertaProcessing's cls= to
# cls_token=, which transformers 5.12's CLIPTokenizer (the Flux script's)
# still passes: a sitecustomize retries with the new name
mkdir -p "$work/shim"
cat > "$work/shim/sitecustomize.py" <<'PYEOF'
import tokenizers.processors as _p
_R = _p.RobertaProcessing
def RobertaProcessing(*a, **k):
    try:
        return _R(*a, **k)
    except TypeError:
        if "cls" not in k:
            raise
        k["cls_token"] = k.pop("cls")
        return _R(*a, **k)
_p.RobertaProcessing = RobertaProcessing
PYEOF
export PYTHONPATH=$work/shim:$D/src${PYTHONPATH:+:$PYTHONPATH} HF_HUB_OFFLINE=1
"$PY" "$here/diffusers_models.py" "$work"
mkdir -p dog
"$PY" -c "
import numpy as np
from PIL import Image
for i in range(5):
    Image.fromarray((np.random.default_rng(i).random((512, 512, 3)) * 255).astype('uint8')).save(f'dog/{i}.jpg')"

row() { # NAME GPU SCRIPT ARGS...
  local name=$1 gpu=$2 script=$3; shift 3
  "$T" estimate --trace --steps 2 $gpu --json -- "$PY" "$D/examples/dreambooth/$script" \
    --instance_data_dir=dog --output_dir="out-$name" --instance_prompt=sks --max_train_steps=3 "$@" > "$name.json" || true
  "$PY" -c "
import json, sys
d = json.load(open('$name.json'))
g = lambda k: d[k] / 2**30
print('| %s | %.2f | %.2f | %.2f | %s | %s |' % ('$name', g('peak_allocated_bytes'), g('peak_reserved_bytes'),
      g('process_bytes'), d['peak_phase'], 'fits' if d['fits'] else 'does not fit'))"
}
sd="--pretrained_model_name_or_path=sd15 --resolution=512 --train_batch_size=1"
low="--gradient_checkpointing --use_8bit_adam"
echo "| run | allocated GiB | reserved GiB | process GiB | peak at | verdict |"
echo "|---|---:|---:|---:|---|---|"
row db-fp32 "--gpu A100-80GB" train_dreambooth.py $sd
row db-fp32-gc-8bit "--gpu A100-80GB" train_dreambooth.py $sd $low
row db-fp16-gc-8bit "--gpu T4" train_dreambooth.py $sd $low --mixed_precision=fp16
row db-prior-fp16-gc-8bit "--gpu T4" train_dreambooth.py $sd $low --mixed_precision=fp16 \
  --with_prior_preservation --class_data_dir=dog --class_prompt=dog --num_class_images=5
# PR #2039's 12 GB recipe (text encoder trained, gradients set to None)
te="$low --mixed_precision=fp16 --train_text_encoder --set_grads_to_none"
row pr2039-b1 "--gpu RTX-3060" train_dreambooth.py $sd $te
row pr2039-b5 "--gpu RTX-3060" train_dreambooth.py --pretrained_model_name_or_path=sd15 --resolution=512 --train_batch_size=5 $te
row pr2039-768 "--gpu RTX-3060" train_dreambooth.py --pretrained_model_name_or_path=sd15 --resolution=768 --train_batch_size=1 $te
row pr2039-1024 "--gpu RTX-3060" train_dreambooth.py --pretrained_model_name_or_path=sd15 --resolution=1024 --train_batch_size=1 $te
row lora-fp16 "--gpu T4" train_dreambooth_lora.py $sd --mixed_precision=fp16
row lora-fp16-gc "--gpu T4" train_dreambooth_lora.py $sd --mixed_precision=fp16 --gradient_checkpointing
xl="--pretrained_model_name_or_path=sdxl --resolution=1024 --train_batch_size=1 --mixed_precision=fp16"
row sdxl-lora-fp16 "--gpu RTX-4090" train_dreambooth_lora_sdxl.py $xl
row sdxl-lora-fp16-gc-8bit "--gpu T4" train_dreambooth_lora_sdxl.py $xl $low
fx="--pretrained_model_name_or_path=flux --resolution=512 --train_batch_size=1 --mixed_precision=bf16"
row flux-lora "--gpu H100-80GB" train_dreambooth_lora_flux.py $fx
row flux-lora-gc-8bit "--gpu RTX-4090" train_dreambooth_lora_flux.py $fx $low
row flux-lora-r16-te "--gpu A100-40GB" train_dreambooth_lora_flux.py $fx --rank=16 --train_text_encoder
