#!/usr/bin/env bash
# Levers of `torchmem estimate --trace` against a trace of the same script
# with the change made by the script itself. Two what-ifs, replayed from
# the trace of the script as it is: checkpoint (gradient checkpointing of
# each block; the script's own checkpointing switched on) and
# grads-to-none (zero_grad(set_to_none=True); the script's flag, or
# set_to_none.py making it zero_grad's default on torch 1.13). And amp, a
# second trace with the hook's autocast region around the forward and the
# loss, against the script's own mixed precision (its flag). One table
# row a pair: the plain trace's process figure, the lever's, the
# retrace's, the error.
#
# usage: PY=<torch 2.x python> PY113=<torch 1.13 python> [TIMM=timm checkout]
#        [EXAMPLES113=pytorch/examples checkout for torch 1.13]
#        [DIFFUSERS=diffusers checkout DIFFUSERS_WORK=the WORKDIR
#        bench/trace/diffusers.sh made] [QLORA_MODELS=the WORKDIR
#        bench/trace/qlora.sh made] [NANOGPT=karpathy/nanoGPT checkout]
#        [LLMC=karpathy/llm.c checkout] bash bench/trace/lever_retrace.sh WORKDIR
# The rows of a source not given are skipped. hf_train.py needs
# transformers; timm and the examples torchvision; diffusers' rows its
# workdir's sparse SD 1.5, SDXL and Flux checkpoints and its shim; the
# QLoRA row PEFT and bitsandbytes on PYTHONPATH; the Trainer rows
# accelerate; the Lightning row lightning (its src/, lightning-utilities'
# and torchmetrics' on PYTHONPATH). nanoGPT and llm.c get random token shards in their
# checkouts' data directories, llm.c a stand-in tiktoken (it samples text
# with it; not packaged for Debian).
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
	local lever=$1 name=$2 gpu=$3 dir=$4 plain=$5 ckpt=$6 retrace=--retrace=false
	case $lever in amp-*) retrace=--retrace ;; esac # the amp lever is the second trace
	# (the argv words are split on purpose: each is a command line)
	# shellcheck disable=SC2086
	(cd "$dir" && "$T" estimate --trace --steps 2 --gpu "$gpu" --json $retrace -- $plain > "$work/$lever-$name-plain.json") || true
	# shellcheck disable=SC2086
	(cd "$dir" && "$T" estimate --trace --steps 2 --gpu "$gpu" --json --retrace=false -- $ckpt > "$work/$lever-$name-ckpt.json") || true
	"$PY" - "$work/$lever-$name" "$name" "$gpu" "$lever" <<'PYEOF'
import json, sys
base, name, gpu, lever = sys.argv[1:5]
p, c = json.load(open(base + "-plain.json")), json.load(open(base + "-ckpt.json"))
lv = [l for l in p.get("levers") or [] if l["lever"] == lever]
g = lambda b: "%.2f" % (b / 2**30)
if not lv:
    why = [n for n in p.get("retraces_not_offered") or [] if n["lever"] == lever]
    said = "not offered"
    if why and why[0].get("end"):
        said += ": failed (%s)" % (why[0]["end"].get("op") or why[0]["end"]["kind"])
    elif why:
        said += ": retraced %s" % g(why[0]["process_bytes"])
    print("| %s | %s | %s | %s | %s | %s | |" % (lever, name, gpu, g(p["process_bytes"]), said, g(c["process_bytes"])))
else:
    l = lv[0]
    err = 100.0 * (l["process_bytes"] - c["process_bytes"]) / c["process_bytes"]
    blocks = " (%s)" % ", ".join(l["modules"]) if l.get("modules") else ""
    print("| %s | %s | %s | %s | %s%s | %s | %+.2f%% |" % (lever, name, gpu, g(p["process_bytes"]), g(l["process_bytes"]),
          blocks, g(c["process_bytes"]), err))
PYEOF
}

# combo LEVERS NAME GPU DIR "PLAIN ARGV" "CHANGED ARGV": the plain trace with
# --combine LEVERS (the levers replayed together) against the changed one
combo() {
	local levers=$1 name=$2 gpu=$3 dir=$4 plain=$5 changed=$6
	# shellcheck disable=SC2086
	(cd "$dir" && "$T" estimate --trace --steps 2 --gpu "$gpu" --json --combine "$levers" -- $plain > "$work/combo-$name-plain.json") || true
	# shellcheck disable=SC2086
	(cd "$dir" && "$T" estimate --trace --steps 2 --gpu "$gpu" --json --retrace=false -- $changed > "$work/combo-$name-changed.json") || true
	"$PY" - "$work/combo-$name" "$name" "$gpu" "$levers" <<'PYEOF'
import json, sys
base, name, gpu, levers = sys.argv[1:5]
p, c = json.load(open(base + "-plain.json")), json.load(open(base + "-changed.json"))
g = lambda b: "%.2f" % (b / 2**30)
k = p["combined"]
err = 100.0 * (k["process_bytes"] - c["process_bytes"]) / c["process_bytes"]
print("| %s | %s | %s | %s | %s (time %.2f) | %s | %+.2f%% |" % (" + ".join(k["levers"]), name, gpu, g(p["process_bytes"]),
      g(k["process_bytes"]), k["cost"], g(c["process_bytes"]), err))
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
# amp: float32 against the script's own autocast (bf16 from sm80, fp16 with
# a GradScaler before)
pair amp-bf16 gpt2-8x256-eager A10 "$td" "$g2 fp32 eager eager plain" "$g2 amp-bf16 eager eager plain"
pair amp-bf16 gpt2-8x256-sdpa A10 "$td" "$g2 fp32 sdpa eager plain" "$g2 amp-bf16 sdpa eager plain"
if "$PY" -c "import transformers" 2>/dev/null; then
	hf="$PY hf_train.py"
	pair amp-bf16 hf-tinyllama-4x512-sdpa A100-80GB "$td" "$hf tinyllama 4 512 fp32 0 sdpa" "$hf tinyllama 4 512 amp-bf16 0 sdpa"
	pair amp-bf16 hf-bert-base-16x512-eager A100-80GB "$td" "$hf bert-base 16 512 fp32 0 eager" "$hf bert-base 16 512 amp-bf16 0 eager"
	if "$PY" -c "import accelerate" 2>/dev/null; then
		"$PY" -c 'import sys; from transformers import GPT2Config; GPT2Config().save_pretrained(sys.argv[1])' "$work/gpt2cfg"
		tr="$PY $here/hf_trainer.py cfg:$work/gpt2cfg 8 1024 0"
		pair amp-bf16 trainer-gpt2-124m-8x1024 A100-80GB "$work" "env HF_TRAINER_PRECISION=fp32 $tr" "$tr"
	fi
fi
if "$PY" -c "import lightning" 2>/dev/null; then
	pair amp-bf16 lightning-lm-8x512 A100-80GB "$work" "$PY $here/lightning_amp.py 32-true" "$PY $here/lightning_amp.py bf16-mixed"
fi
if [ -n "${NANOGPT:-}" ]; then
	mkdir -p "$NANOGPT/data/fake"
	"$PY" -c 'import sys, numpy as np
for s, n in (("train", 300000), ("val", 30000)):
    np.random.default_rng(0).integers(0, 50257, n).astype(np.uint16).tofile("%s/%s.bin" % (sys.argv[1], s))' "$NANOGPT/data/fake"
	ng="$PY train.py --dataset=fake --compile=False --eval_iters=2 --gradient_accumulation_steps=1 --wandb_log=False"
	pair amp-bf16 nanogpt-124m-12x1024 A100-80GB "$NANOGPT" "$ng --batch_size=12 --dtype=float32" "$ng --batch_size=12 --dtype=bfloat16"
	pair amp-fp16 nanogpt-124m-8x1024 V100-32GB "$NANOGPT" "$ng --batch_size=8 --dtype=float32" "$ng --batch_size=8 --dtype=float16"
fi
if [ -n "${LLMC:-}" ]; then
	mkdir -p "$work/llmc-shim" "$LLMC/dev/data/fake"
	printf 'class _Enc:\n    eot_token = 50256\n    def encode(self, s, **k): return [0]\n    def decode(self, t): return ""\ndef get_encoding(name): return _Enc()\n' > "$work/llmc-shim/tiktoken.py"
	"$PY" -c 'import sys, numpy as np
n = 200000
h = np.zeros(256, dtype=np.int32); h[0], h[1], h[2] = 20240520, 1, n
with open(sys.argv[1], "wb") as f:
    f.write(h.tobytes()); f.write(np.random.default_rng(0).integers(0, 50257, n).astype(np.uint16).tobytes())' "$LLMC/dev/data/fake/train.bin"
	lc="$PY train_gpt2.py --input_bin dev/data/fake/train.bin --model d12 --batch_size 8 --sequence_length 1024 --total_batch_size 8192 --num_iterations 3 --write_tensors 0"
	PYTHONPATH=$work/llmc-shim pair amp-bf16 llmc-d12-8x1024-flash H200 "$LLMC" "$lc --dtype float32 --flash 1" "$lc --dtype bfloat16 --flash 1"
	PYTHONPATH=$work/llmc-shim pair amp-bf16 llmc-d12-8x1024-eager H200 "$LLMC" "$lc --dtype float32 --flash 0" "$lc --dtype bfloat16 --flash 0"
fi
if [ -n "${TIMM:-}" ]; then
	PYTHONPATH=$TIMM pair amp-bf16 timm-vit-s-b32 A100-80GB "$TIMM" "$tm --model vit_small_patch16_224" "$tm --model vit_small_patch16_224 --amp --amp-dtype bfloat16"
	PYTHONPATH=$TIMM pair amp-bf16 timm-resnet50-b32 A100-80GB "$TIMM" "$tm --model resnet50" "$tm --model resnet50 --amp --amp-dtype bfloat16"
	PYTHONPATH=$TIMM pair amp-fp16 timm-resnet50-b32 T4 "$TIMM" "$tm --model resnet50" "$tm --model resnet50 --amp"
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

# levers combined (--combine) against the script with all of its switches
echo
echo "| levers combined | script | --gpu | plain GiB | combined GiB | retraced with the changes GiB | combined vs retrace |"
echo "|---|---|---|---:|---|---:|---:|"
combo amp-bf16,checkpoint gpt2-8x256-eager A10 "$td" "$g2 fp32 eager eager plain" "$g2 amp-bf16 eager eager ckpt"
if "$PY" -c "import transformers" 2>/dev/null; then
	hf="$PY hf_train.py"
	combo amp-bf16,checkpoint hf-tinyllama-4x512-sdpa A100-80GB "$td" "$hf tinyllama 4 512 fp32 0 sdpa" "$hf tinyllama 4 512 amp-bf16 1 sdpa"
	HF_TRAIN_USE_CACHE=0 combo amp-bf16,checkpoint hf-gpt2-124m-8x1024-sdpa A100-80GB "$td" "$hf gpt2-124m 8 1024 fp32 0 sdpa" "$hf gpt2-124m 8 1024 amp-bf16 1 sdpa"
	combo amp-bf16,checkpoint hf-bert-base-16x512-eager A100-80GB "$td" "$hf bert-base 16 512 fp32 0 eager" "$hf bert-base 16 512 amp-bf16 1 eager"
	if "$PY" -c "import accelerate" 2>/dev/null; then
		tr0="$PY $here/hf_trainer.py cfg:$work/gpt2cfg 8 1024"
		combo amp-bf16,checkpoint trainer-gpt2-124m-8x1024 A100-80GB "$work" "env HF_TRAINER_PRECISION=fp32 $tr0 0" "$tr0 1"
	fi
fi
if [ -n "${TIMM:-}" ]; then
	PYTHONPATH=$TIMM combo amp-bf16,checkpoint timm-vit-s-b32 A100-80GB "$TIMM" "$tm --model vit_small_patch16_224" \
		"$tm --model vit_small_patch16_224 --amp --amp-dtype bfloat16 --grad-checkpointing"
	PYTHONPATH=$TIMM combo amp-bf16,checkpoint timm-resnet50-b32 A100-80GB "$TIMM" "$tm --model resnet50" \
		"$tm --model resnet50 --amp --amp-dtype bfloat16 --grad-checkpointing"
fi
