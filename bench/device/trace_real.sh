#!/usr/bin/env bash
# trace_real.sh — issue 15's ground truth for `torchmem estimate --trace`:
# each script is run twice, unmodified, for STEPS (3) optimizer steps:
#   torchmem estimate --trace --json         the meta-tensor prediction (no GPU used)
#   torchmem estimate --trace --real --json  the same steps on the GPU: memory_stats'
#                                            peaks, the allocator's history, NVML
# then bench/device/trace_real_compare.py prints predicted against measured
# peak allocated (bound 3 %), peak reserved (5 %) and nvidia-smi's figure.
# Scripts (bench/device/trace_real_models.py, internal/tracerun/testdata):
#   hf-gpt2, hf-llama  Hugging Face from_config (when transformers imports;
#                      else the plain-torch twins gpt2.py / llama.py, named so)
#   resnet50           torchvision (when it imports)
#   custom-gpt2        gpt2.py: GPT-2 written in plain torch (a custom model)
#   custom-transformer transformer.py: attention and a custom autograd Function
#   ddp-torchrun       ddp_train.py under torchrun --nproc_per_node 1: DDP's
#                      buckets against a real NCCL process group of one
#   gpt2-expandable    custom-gpt2 under --alloc-conf (PYTORCH_CUDA_ALLOC_CONF
#   gpt2-split-expand  in the real run): expandable_segments:True, and with
#                      max_split_size_mb:128 too, which the allocator model
#                      predicts grows reserved (pytorch/pytorch#123548)
#   side-streams       side_stream.py: tensors on side streams; each stream's
#                      freed blocks are its own (100 MiB reserved, not 50)
#   stream-thread      stream_thread.py: a thread's torch.cuda.stream(s) is its own
#                      (40 MiB reserved, not 20)
#   fsdp2-streams      bench/trace/fsdp_llama_plain.py 2 under torchrun 1: FSDP2's
#                      all-gather and reduce-scatter buffers on its own streams
#   hf-wav2vec2        Wav2Vec2ForCTC (base), frozen feature encoder, CTC loss
#   ctc-big            ctc.py known big: CUDA's CTC forward and backward scratch
#   clip-foreach       clip_foreach.py true: clip_grad_norm_(foreach=True)
#   sparse-accumulate  sparse_embedding.py: EmbeddingBag/Embedding(sparse=True),
#   sparse-adagrad     two backwards a step (concatenated sparse gradients),
#                      and Adagrad's coalesce (its scratch, the distinct rows)
# About 6 minutes on an H200 (334 s for the 13 rows before hf-wav2vec2,
# ctc-big and clip-foreach, 2026-12-04); each run is bounded by timeout,
# and no row starts after 400 s.
#   run(command="bash bench/device/trace_real.sh", carry=["torchmem"], timeout_s=540)
# Locally on any CUDA host: OUT=/tmp/tr PACK=0 bash bench/device/trace_real.sh
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-./device-check-out}
TM=${TM:-./torchmem}
PY=${PY:-python3}
STEPS=${STEPS:-3}
D=$OUT/trace-real
mkdir -p "$D"
T0=$(date +%s)
TD=internal/tracerun/testdata

# one NAME ARGS...: the prediction, then the measurement, of one script.
one() {
	local name=$1
	shift
	if [ $(($(date +%s) - T0)) -gt 400 ]; then
		echo "$name skipped: the script is at $(($(date +%s) - T0)) s" | tee "$D/$name.fake.err"
		return
	fi
	local conf=()
	if [ -n "${ALLOC_CONF:-}" ]; then
		conf=(--alloc-conf "$ALLOC_CONF")
	fi
	timeout 150 "$TM" estimate --trace "${conf[@]}" --steps "$STEPS" --json -- "$PY" "$@" >"$D/$name.fake.json" 2>"$D/$name.fake.err"
	echo "$name fake: exit $? after $(($(date +%s) - T0)) s"
	timeout 150 "$TM" estimate --trace --real "${conf[@]}" --steps "$STEPS" --json -- "$PY" "$@" >"$D/$name.real.json" 2>"$D/$name.real.err"
	echo "$name real: exit $? after $(($(date +%s) - T0)) s"
}

"$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())' | tee "$D/torch.txt"
if "$PY" bench/device/trace_real_models.py --check; then
	one hf-gpt2 bench/device/trace_real_models.py hf-gpt2
	one hf-llama bench/device/trace_real_models.py hf-llama
	one hf-wav2vec2 bench/device/trace_real_models.py hf-wav2vec2
else
	echo "transformers does not import: the plain-torch twins of GPT-2 and Llama instead" | tee -a "$D/torch.txt"
	one plain-gpt2-hf-twin "$TD/gpt2.py" 12 768 12 50257 8 512 foreach
	one plain-llama-hf-twin "$TD/llama.py" 8 1024 16 2816 32000 4 512 fp32
fi
if "$PY" -c 'import torchvision' 2>/dev/null; then
	one resnet50 bench/device/trace_real_models.py resnet50
else
	echo "torchvision does not import: no ResNet-50" | tee -a "$D/torch.txt"
fi
one custom-gpt2 "$TD/gpt2.py" 6 512 8 8000 8 256 foreach amp-bf16
one custom-transformer "$TD/transformer.py"
one ddp-torchrun -m torch.distributed.run --standalone --nproc_per_node 1 "$TD/ddp_train.py"
ALLOC_CONF=expandable_segments:True one gpt2-expandable "$TD/gpt2.py" 6 512 8 8000 8 256 foreach amp-bf16
ALLOC_CONF=max_split_size_mb:128,expandable_segments:True one gpt2-split-expand "$TD/gpt2.py" 6 512 8 8000 8 256 foreach amp-bf16
one side-streams "$TD/side_stream.py"
one stream-thread "$TD/stream_thread.py"
one ctc-big "$TD/ctc.py" known big
one clip-foreach "$TD/clip_foreach.py" true
one sparse-accumulate "$TD/sparse_embedding.py" accumulate known big
one sparse-adagrad "$TD/sparse_embedding.py" adagrad known big
one fsdp2-streams -m torch.distributed.run --standalone --nproc_per_node 1 bench/trace/fsdp_llama_plain.py 2 "$TD" 4 1024 16 2816 32000 4 512 amp
"$PY" bench/device/trace_real_compare.py "$D" | tee "$OUT/trace-real.txt"
# the device tool brings 8 files back: the reports as one archive (PACK=0
# keeps the folder as it is)
if [ "${PACK:-1}" = 1 ]; then
	tar czf "$OUT/trace-real.tgz" -C "$OUT" trace-real && rm -rf "$D"
fi
