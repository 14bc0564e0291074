#!/usr/bin/env bash
# Two what-if levers of `torchmem estimate --trace`, replayed from the
# trace of a script as it is, against a retrace of the same script with
# the change made: checkpoint (gradient checkpointing of each block; the
# script's own checkpointing switched on) and grads-to-none
# (zero_grad(set_to_none=True); the script's flag, or set_to_none.py
# making it zero_grad's default on torch 1.13). One table row a pair: the
# plain trace's process figure, the lever's, the retrace's, the error.
#
# usage: PY=<torch 2.x python> PY113=<torch 1.13 python> [TIMM=timm checkout]
#        [EXAMPLES113=pytorch/examples checkout for torch 1.13]
#        [DIFFUSERS=diffusers checkout DIFFUSERS_WORK=the WORKDIR
#        bench/trace/diffusers.sh made] [QLORA_MODELS=the WORKDIR
#        bench/trace/qlora.sh made] bash bench/trace/lever_retrace.sh WORKDIR
# The rows of a source not given are skipped. hf_train.py needs
# transformers; timm and the examples torchvision; diffusers' rows its
# workdir's sparse SD 1.5, SDXL and Flux checkpoints and its shim; the
# QLoRA row PEFT and bitsandbytes on PYTHONPATH.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
T=${TORCHMEM:-torchmem}
PY=${PY:-python3}
PY113=${PY113:-/usr/bin/python3}
work=${1:?usage: PY=python3 bash bench/trace/lever_retrace.sh WORKDIR}
mkdir -p "$work"
export HF_HUB_OFFLINE=1

# pair LEVER NAME GPU DIR "PLAIN ARGV" "CHANGED ARGV": both traced from DIR
pair() {
	local lever=$1 name=$2 gpu=$3 dir=$4 plain=$5 ckpt=$6
	# (the argv words are split on purpose: each is a command line)
	# shellcheck disable=SC2086
	(cd "$dir" && "$T" estimate --trace --steps 2 --gpu "$gpu" --json -- $plain > "$work/$lever-$name-plain.json") || true
	# shellcheck disable=SC2086
	(cd "$dir" && "$T" estimate --trace --steps 2 --gpu "$gpu" --json -- $ckpt > "$work/$lever-$name-ckpt.json") || true
	"$PY" - "$work/$lever-$name" "$name" "$gpu" "$lever" <<'PYEOF'
import json, sys
base, name, gpu, lever = sys.argv[1:5]
p, c = json.load(open(base + "-plain.json")), json.load(open(base + "-ckpt.json"))
lv = [l for l in p.get("levers") or [] if l["lever"] == lever]
g = lambda b: "%.2f" % (b / 2**30)
if not lv:
    print("| %s | %s | %s | %s | not offered | %s | |" % (lever, name, gpu, g(p["process_bytes"]), g(c["process_bytes"])))
else:
    l = lv[0]
    err = 100.0 * (l["process_bytes"] - c["process_bytes"]) / c["process_bytes"]
    blocks = " (%s)" % ", ".join(l["modules"]) if l.get("modules") else ""
    print("| %s | %s | %s | %s | %s%s | %s | %+.2f%% |" % (lever, name, gpu, g(p["process_bytes"]), g(l["process_bytes"]),
          blocks, g(c["process_bytes"]), err))
PYEOF
}

echo "| lever | script | --gpu | plain GiB | lever GiB (blocks) | retraced with the change GiB | lever vs retrace |"
echo "|---|---|---|---:|---|---:|---:|"
td=$repo/internal/tracerun/testdata
none=$here/set_to_none.py
pair grads-to-none gpt2-1x128-fp32 A10 "$td" "$PY113 gpt2.py 4 768 12 50257 1 128 foreach fp32 eager eager keepgrads" \
	"$PY113 gpt2.py 4 768 12 50257 1 128 foreach fp32 eager eager plain"
if [ -n "${EXAMPLES113:-}" ]; then
	pair grads-to-none imagenet-resnet50-b32 A100-80GB "$EXAMPLES113/imagenet" "$PY113 main.py --dummy -a resnet50 -b 32" \
		"$PY113 $none main.py --dummy -a resnet50 -b 32"
fi
g2="$PY gpt2.py 4 768 12 50257 8 256 foreach"
pair checkpoint gpt2-fp32 A10 "$td" "$g2 fp32 eager eager plain" "$g2 fp32 eager eager ckpt"
pair checkpoint gpt2-bf16-sdpa A10 "$td" "$g2 amp-bf16 sdpa eager plain" "$g2 amp-bf16 sdpa eager ckpt"
if "$PY" -c "import transformers" 2>/dev/null; then
	hf="$PY hf_train.py"
	pair checkpoint hf-tinyllama-4x512-bf16 A100-80GB "$td" "$hf tinyllama 4 512 amp-bf16 0 sdpa" "$hf tinyllama 4 512 amp-bf16 1 sdpa"
	HF_TRAIN_USE_CACHE=0 pair checkpoint hf-gpt2-124m-8x1024-bf16 A100-80GB "$td" "$hf gpt2-124m 8 1024 amp-bf16 0 sdpa" "$hf gpt2-124m 8 1024 amp-bf16 1 sdpa"
	pair checkpoint hf-bert-base-16x512-fp32 A100-80GB "$td" "$hf bert-base 16 512 fp32 0 eager" "$hf bert-base 16 512 fp32 1 eager"
fi
if [ -n "${TIMM:-}" ]; then
	data=$work/timm-data
	"$PY" - "$data" <<'PYEOF'
import os, sys
import numpy as np
from PIL import Image
root = sys.argv[1]
for split, n in (("train", 16), ("validation", 4)):
    for c in range(4):
        d = os.path.join(root, split, "c%d" % c)
        os.makedirs(d, exist_ok=True)
        for i in range(n):
            rng = np.random.default_rng(100 * c + i)
            Image.fromarray((rng.random((280, 320, 3)) * 255).astype("uint8")).save(os.path.join(d, "%d.jpg" % i))
PYEOF
	tm="$PY train.py --data-dir $data -b 32 --epochs 1 -j 1 --num-classes 4"
	t13="train.py --data-dir $data -b 8 --epochs 1 -j 1 --num-classes 4 --model vit_base_patch16_224"
	PYTHONPATH=$TIMM pair grads-to-none timm-vit-b-b8-torch1.13 A100-80GB "$TIMM" "$PY113 $t13" "$PY113 $none $t13"
	PYTHONPATH=$TIMM pair checkpoint timm-vit-s-amp A100-80GB "$TIMM" "$tm --model vit_small_patch16_224 --amp" "$tm --model vit_small_patch16_224 --amp --grad-checkpointing"
	PYTHONPATH=$TIMM pair checkpoint timm-resnet50 A100-80GB "$TIMM" "$tm --model resnet50" "$tm --model resnet50 --grad-checkpointing"
fi
if [ -n "${QLORA_MODELS:-}" ]; then
	q="$PY $here/qlora_trainer.py llama-7b 4 1024"
	pair checkpoint qlora-llama2-7b-nf4-4x1024-r16 H100-80GB "$QLORA_MODELS" "$q 0 adamw_torch 16 nf4" "$q 1 adamw_torch 16 nf4"
fi
if [ -n "${DIFFUSERS:-}" ]; then
	export PYTHONPATH=$DIFFUSERS_WORK/shim:$DIFFUSERS/src${PYTHONPATH:+:$PYTHONPATH}
	db="$PY $DIFFUSERS/examples/dreambooth"
	common="--instance_data_dir=dog --instance_prompt=sks --max_train_steps=3 --train_batch_size=1"
	sd="--pretrained_model_name_or_path=sd15 --resolution=512 $common --output_dir=$work/out-sd"
	pair checkpoint db-sd15-8bit A100-80GB "$DIFFUSERS_WORK" "$db/train_dreambooth.py $sd --use_8bit_adam" \
		"$db/train_dreambooth.py $sd --use_8bit_adam --gradient_checkpointing"
	pair checkpoint db-sd15-8bit-b4 A100-80GB "$DIFFUSERS_WORK" "$db/train_dreambooth.py $sd --use_8bit_adam --train_batch_size=4" \
		"$db/train_dreambooth.py $sd --use_8bit_adam --train_batch_size=4 --gradient_checkpointing"
	pair grads-to-none db-sd15-8bit A100-80GB "$DIFFUSERS_WORK" "$db/train_dreambooth.py $sd --use_8bit_adam" \
		"$db/train_dreambooth.py $sd --use_8bit_adam --set_grads_to_none"
	pair grads-to-none db-sd15-fp32 A100-80GB "$DIFFUSERS_WORK" "$db/train_dreambooth.py $sd" \
		"$db/train_dreambooth.py $sd --set_grads_to_none"
	pair checkpoint db-sd15-fp32 A100-80GB "$DIFFUSERS_WORK" "$db/train_dreambooth.py $sd" "$db/train_dreambooth.py $sd --gradient_checkpointing"
	pair checkpoint lora-sd15-fp16 T4 "$DIFFUSERS_WORK" "$db/train_dreambooth_lora.py $sd --mixed_precision=fp16" \
		"$db/train_dreambooth_lora.py $sd --mixed_precision=fp16 --gradient_checkpointing"
	xl="--pretrained_model_name_or_path=sdxl --resolution=1024 $common --mixed_precision=fp16 --output_dir=$work/out-xl"
	pair checkpoint lora-sdxl-fp16 RTX-4090 "$DIFFUSERS_WORK" "$db/train_dreambooth_lora_sdxl.py $xl" \
		"$db/train_dreambooth_lora_sdxl.py $xl --gradient_checkpointing"
	fx="--pretrained_model_name_or_path=flux --resolution=512 $common --mixed_precision=bf16 --output_dir=$work/out-flux"
	pair checkpoint lora-flux-bf16 H100-80GB "$DIFFUSERS_WORK" "$db/train_dreambooth_lora_flux.py $fx" \
		"$db/train_dreambooth_lora_flux.py $fx --gradient_checkpointing"
fi
