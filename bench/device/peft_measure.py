#!/usr/bin/env python3
"""Measure LoRA / QLoRA training peaks on a GPU host, as rows
`TestPublishedPEFTAndQuant` reads (internal/estimate/testdata/
peft_published.jsonl: kind train_peak_allocated, options in torchmem's
Options JSON), so a measured run sits beside the published ones.

    python3 bench/device/peft_measure.py OUT.jsonl [ID ...]
    cat OUT.jsonl >> internal/estimate/testdata/peft_published.jsonl   # back on the build machine
    go test ./internal/estimate/ -run Published -v

Needs CUDA, torch, transformers and peft; the QLoRA rows also need
bitsandbytes and are skipped (with a line saying so) when it does not
import. Each configuration runs in a fresh process. The model is a
Llama-style one built from its config with random weights (nothing is
downloaded): saved once to a temporary directory and loaded back with
from_pretrained(torch_dtype=..., quantization_config=...), as a real
fine-tuning script loads it. The loop is a plain one (no Trainer): AdamW
(foreach) or bitsandbytes' PagedAdamW8bit over the trainable parameters,
autocast for amp-*, three optimizer steps, the peak statistics reset
before each; peak = the largest step peak.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

LLAMA_SMALL = {"model_type": "llama", "vocab_size": 32000, "hidden_size": 1024, "intermediate_size": 2816,
               "num_hidden_layers": 16, "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 64,
               "hidden_act": "silu", "max_position_embeddings": 4096, "rms_norm_eps": 1e-6,
               "tie_word_embeddings": False}

# torchmem's Options for each run: what the row's "options" holds.
CONFIGS = [
    dict(id="measured-lora-llamasmall-b4-s1024-bf16", batch=4, seq=1024, precision="bf16",
         peft=dict(method="lora", r=8, alpha=16, targets="q_proj,v_proj")),
    dict(id="measured-lora-llamasmall-b4-s1024-ampbf16-ckpt-all", batch=4, seq=1024, precision="amp-bf16",
         checkpointing=True, peft=dict(method="lora", r=16, alpha=32, dropout=0.05, targets="all-linear")),
    dict(id="measured-qlora-llamasmall-b4-s1024-nf4dq", batch=4, seq=1024, precision="amp-bf16", checkpointing=True,
         peft=dict(method="qlora", r=16, alpha=32, targets="all-linear"),
         quant=dict(method="nf4", double_quant=True, compute_dtype="bf16")),
    dict(id="measured-qlora-llamasmall-b8-s1024-nf4-paged8bit", batch=8, seq=1024, precision="amp-bf16",
         checkpointing=True, optimizer="paged-adamw-8bit",
         peft=dict(method="qlora", r=64, alpha=16, dropout=0.1, targets="all-linear"),
         quant=dict(method="nf4", compute_dtype="bf16")),
]

ALL_LINEAR = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def options(c):
    """The row's options, in torchmem's Options JSON."""
    o = dict(batch=c["batch"], seq=c["seq"], precision=c["precision"], accum=1,
             checkpointing=c.get("checkpointing", False), attention="sdpa", inference=False,
             optimizer=c.get("optimizer", "adamw"), optimizer_impl="foreach", peft=c["peft"])
    if "quant" in c:
        o["quant"] = c["quant"]
    return o


def one(c):
    import torch
    import transformers
    from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
    half = torch.bfloat16
    cfg = dict(LLAMA_SMALL)
    kind = cfg.pop("model_type")
    conf = transformers.AutoConfig.for_model(kind, **cfg)
    qlora = c["peft"]["method"] == "qlora"
    kwargs = dict(torch_dtype=half, attn_implementation="sdpa")
    if qlora:
        q = c["quant"]
        kwargs["quantization_config"] = transformers.BitsAndBytesConfig(
            load_in_4bit=True, bnb_4bit_quant_type=q["method"],
            bnb_4bit_use_double_quant=q.get("double_quant", False),
            bnb_4bit_compute_dtype={"bf16": torch.bfloat16, "fp16": torch.float16}.get(q.get("compute_dtype"), torch.float32))
    with tempfile.TemporaryDirectory() as d:
        transformers.AutoModelForCausalLM.from_config(conf).save_pretrained(d)
        m = transformers.AutoModelForCausalLM.from_pretrained(d, device_map={"": 0}, **kwargs)
    ckpt = c.get("checkpointing", False)
    if qlora:
        m = prepare_model_for_kbit_training(m, use_gradient_checkpointing=ckpt)
    elif ckpt:
        m.gradient_checkpointing_enable()
        m.enable_input_require_grads()
    p = c["peft"]
    targets = ALL_LINEAR if p["targets"] == "all-linear" else p["targets"].split(",")
    m = get_peft_model(m, LoraConfig(r=p["r"], lora_alpha=p["alpha"], lora_dropout=p.get("dropout", 0.0),
                                     target_modules=targets, task_type="CAUSAL_LM"))
    m.train()
    trainable = [t for t in m.parameters() if t.requires_grad]
    n_trainable = sum(t.numel() for t in trainable)
    if c.get("optimizer") == "paged-adamw-8bit":
        import bitsandbytes as bnb
        opt = bnb.optim.PagedAdamW8bit(trainable, lr=1e-4)
    else:
        opt = torch.optim.AdamW(trainable, lr=1e-4)
    amp = c["precision"].startswith("amp-")
    b, s = c["batch"], c["seq"]
    torch.cuda.synchronize()
    steps = []
    for _ in range(3):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        ids = torch.randint(0, conf.vocab_size, (b, s), device="cuda")
        with torch.autocast("cuda", dtype=half, enabled=amp):
            loss = m(input_ids=ids, labels=ids, use_cache=False).loss
        loss.backward()
        del loss, ids
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        steps.append(torch.cuda.max_memory_allocated())
    peak = max(steps)
    gpu = torch.cuda.get_device_name(0)
    row = dict(id=c["id"], source="measured by bench/device/peft_measure.py on %s (torch %s, transformers %s)" % (
        gpu, torch.__version__, transformers.__version__),
        setting="llama-small (1024 hidden, 16 layers) from random weights, saved and loaded with from_pretrained; "
                "%d trainable parameters; step peaks %s" % (n_trainable, steps),
        kind="train_peak_allocated",
        model=dict(name="llama-small", hidden=1024, intermediate=2816, layers=16, heads=16, kv_heads=4, vocab=32000),
        options=options(c), measured_bytes=peak, tolerance=0.05)
    print(json.dumps(row))


def main():
    args = sys.argv[1:]
    if args and args[0] == "--one":
        one(json.loads(args[1]))
        return
    if not args:
        sys.exit(__doc__)
    out, only = args[0], set(args[1:])
    try:
        import bitsandbytes  # noqa: F401
        have_bnb = True
    except ImportError:
        have_bnb = False
    failed = 0
    with open(out, "a") as f:
        for c in CONFIGS:
            if only and c["id"] not in only:
                continue
            if not have_bnb and (c["peft"]["method"] == "qlora" or c.get("optimizer", "").startswith("paged")):
                print("SKIPPED %s: bitsandbytes does not import" % c["id"], flush=True)
                continue
            t = time.time()
            try:
                p = subprocess.run([sys.executable, __file__, "--one", json.dumps(c)], capture_output=True, text=True,
                                   timeout=600)
            except subprocess.TimeoutExpired:
                failed += 1
                print("FAILED %s: over 600 s" % c["id"], flush=True)
                continue
            line = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
            if p.returncode != 0 or not line.startswith("{"):
                failed += 1
                print("FAILED %s: %s" % (c["id"], (p.stderr.strip().splitlines() or ["no output"])[-1]), flush=True)
                continue
            f.write(line + "\n")
            print("%-52s peak allocated %6.2f GB  (%.0f s)" % (c["id"], json.loads(line)["measured_bytes"] / 1e9,
                                                             time.time() - t), flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
