#!/usr/bin/env python3
"""Measure the peak GPU memory of training and inference configurations, for
checking `torchmem estimate` against configurations not in its calibration
file (other batches and sequence lengths, checkpointing, accumulation, pure
bf16, fp16 with a GradScaler, generation). Needs CUDA, torch and
transformers; torchvision is used for ResNet-50 when installed, else the same
network is built here.

    python3 bench/device/estimate_measure.py OUT.jsonl [ID ...]
    go run ./bench/estimate OUT.jsonl       # back on the build machine

Each configuration runs in a fresh process (its own CUDA context and
allocator), so nothing carries over. Every row has the calibration file's
shape (internal/estimate/testdata/calibration.jsonl) plus the knobs it
varies (accum, checkpointing, gen_len): the model is built from its config
in fp32 on the GPU and cast there for pure half precision; the peak
statistics are reset after the model is on the GPU and before every step;
three steps (two generations); peak = the largest step peak; nvidia-smi's figure is NVML's
used memory for this process after the last step. The optimizer is PyTorch's
default (foreach), the attention SDPA, models in train() mode for training
and eval() for inference.

--dry-run runs each configuration tiny on the CPU, to check the script
itself where there is no GPU (the numbers are then meaningless).
"""
import json
import os
import subprocess
import sys
import time

LLAMA_SMALL = {"model_type": "llama", "vocab_size": 32000, "hidden_size": 1024, "intermediate_size": 2816,
               "num_hidden_layers": 16, "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 64,
               "hidden_act": "silu", "max_position_embeddings": 4096, "rms_norm_eps": 1e-6,
               "tie_word_embeddings": False}
# Small mixtures of experts (issue 14): the routed walk (router, top-k,
# per-expert gathered rows, shared experts) checked on a GPU.
MIXTRAL_SMALL = {"model_type": "mixtral", "vocab_size": 32000, "hidden_size": 1024, "intermediate_size": 2048,
                 "num_hidden_layers": 8, "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 64,
                 "num_local_experts": 8, "num_experts_per_tok": 2, "max_position_embeddings": 4096,
                 "tie_word_embeddings": False}
QWEN2MOE_SMALL = {"model_type": "qwen2_moe", "vocab_size": 32000, "hidden_size": 1024, "intermediate_size": 2816,
                  "num_hidden_layers": 8, "num_attention_heads": 16, "num_key_value_heads": 16,
                  "num_experts": 16, "num_experts_per_tok": 4, "moe_intermediate_size": 512,
                  "shared_expert_intermediate_size": 1024, "max_position_embeddings": 4096,
                  "tie_word_embeddings": False}
GPT2 = {"model_type": "gpt2"}
BERT = {"model_type": "bert"}

CONFIGS = [
    dict(id="resnet50-b32-fp32-sgdm", model="resnet50", batch=32, precision="fp32", optim="sgd-momentum"),
    dict(id="resnet50-b128-ampbf16-sgdm", model="resnet50", batch=128, precision="amp-bf16", optim="sgd-momentum"),
    dict(id="gpt2-b4-s1024-ampfp16-scaler-adamw-ckpt", model=GPT2, batch=4, seq=1024, precision="amp-fp16",
         optim="adamw", checkpointing=True),
    dict(id="gpt2-b8-s512-fp32-adamw-accum2", model=GPT2, batch=8, seq=512, precision="fp32", optim="adamw", accum=2),
    dict(id="llama-small-b2-s2048-bf16-adamw", model=LLAMA_SMALL, batch=2, seq=2048, precision="bf16", optim="adamw"),
    dict(id="bert-base-b16-s512-ampbf16-adamw", model=BERT, batch=16, seq=512, precision="amp-bf16", optim="adamw"),
    dict(id="gpt2-b4-s128-bf16-generate512", model=GPT2, batch=4, seq=128, precision="bf16", mode="generate",
         gen_len=512),
    dict(id="llama-small-b8-s256-bf16-generate1024", model=LLAMA_SMALL, batch=8, seq=256, precision="bf16",
         mode="generate", gen_len=1024),
    dict(id="mixtral-small-b4-s1024-bf16-adamw", model=MIXTRAL_SMALL, batch=4, seq=1024, precision="bf16",
         optim="adamw"),
    dict(id="qwen2moe-small-b4-s1024-ampbf16-adamw-ckpt", model=QWEN2MOE_SMALL, batch=4, seq=1024,
         precision="amp-bf16", optim="adamw", checkpointing=True),
]


def resnet50(torch):
    """torchvision's resnet50() (v1.5: stride on the 3x3 conv), if
    torchvision is missing."""
    try:
        import torchvision
        return torchvision.models.resnet50()
    except ImportError:
        pass
    nn = torch.nn

    class Bottleneck(nn.Module):
        def __init__(self, cin, width, stride):
            super().__init__()
            out = width * 4
            self.conv1, self.bn1 = nn.Conv2d(cin, width, 1, bias=False), nn.BatchNorm2d(width)
            self.conv2, self.bn2 = nn.Conv2d(width, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width)
            self.conv3, self.bn3 = nn.Conv2d(width, out, 1, bias=False), nn.BatchNorm2d(out)
            self.relu = nn.ReLU(inplace=True)
            self.downsample = None
            if stride != 1 or cin != out:
                self.downsample = nn.Sequential(nn.Conv2d(cin, out, 1, stride, bias=False), nn.BatchNorm2d(out))

        def forward(self, x):
            identity = x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.relu(self.bn2(self.conv2(out)))
            out = self.bn3(self.conv3(out))
            if self.downsample is not None:
                identity = self.downsample(x)
            out += identity
            return self.relu(out)

    layers, cin = [], 64
    for i, blocks in enumerate([3, 4, 6, 3]):
        width = 64 << i
        for j in range(blocks):
            layers.append(Bottleneck(cin, width, 2 if (j == 0 and i > 0) else 1))
            cin = width * 4
    return nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
                         nn.MaxPool2d(3, 2, 1), *layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2048, 1000))


def build(torch, c, dry):
    """The model, the row's model_config, and a function making a batch."""
    dev = "cpu" if dry else "cuda"
    if c["model"] == "resnet50":
        m = resnet50(torch)
        size = 32 if dry else c.get("image_size", 224)
        b = 2 if dry else c["batch"]

        def batch():
            return dict(x=torch.randn(b, 3, size, size, device=dev), y=torch.randint(0, 1000, (b,), device=dev))
        return m, {"torchvision": "resnet50"}, batch
    import transformers
    cfg = dict(c["model"])
    kind = cfg.pop("model_type")
    if dry:
        cfg.update(num_hidden_layers=1, n_layer=1)
    conf = transformers.AutoConfig.for_model(kind, **cfg)
    auto = transformers.AutoModelForMaskedLM if kind == "bert" else transformers.AutoModelForCausalLM
    m = auto.from_config(conf, attn_implementation="sdpa")
    b, s = (2, 16) if dry else (c["batch"], c["seq"])
    vocab = conf.vocab_size

    def batch():
        ids = torch.randint(0, vocab, (b, s), device=dev)
        d = dict(input_ids=ids, labels=ids)
        if kind != "bert":
            d["use_cache"] = False  # the cache would live with the output: the harness drops it
        return d
    return m, m.config.to_dict(), batch


def train_step(torch, m, c, opt, scaler, batch, autocast):
    """One optimizer step; True when a GradScaler skipped it (inf/NaN
    gradients: no optimizer state is made until a step is taken)."""
    for _ in range(c.get("accum", 1)):
        data = batch()
        with autocast():
            if "x" in data:
                loss = torch.nn.functional.cross_entropy(m(data["x"]), data["y"])
            else:
                loss = m(**data).loss
        loss = loss / c.get("accum", 1)
        (scaler.scale(loss) if scaler else loss).backward()
        del loss, data
    skipped = False
    if scaler:
        before = scaler.get_scale()
        scaler.step(opt)
        scaler.update()
        skipped = scaler.get_scale() < before
    else:
        opt.step()
    opt.zero_grad(set_to_none=True)
    return skipped


def infer_step(torch, m, c, batch, dry):
    data = batch()
    with torch.no_grad():
        if c.get("mode") == "generate":
            ids = data["input_ids"]
            n = 4 if dry else c["gen_len"]
            m.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=n, min_new_tokens=n,
                       do_sample=False, pad_token_id=0)
        elif "x" in data:
            m(data["x"])
        else:
            m(**{k: v for k, v in data.items() if k != "labels"})


def nvml_used(pid):
    try:
        import pynvml
        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        for p in pynvml.nvmlDeviceGetComputeRunningProcesses(h):
            if p.pid == pid:
                return p.usedGpuMemory
    except Exception as e:  # noqa: BLE001 -- reported in the row
        return "nvml: %s" % e
    return None


def one(c, dry):
    import contextlib
    import torch
    m, model_config, batch = build(torch, c, dry)
    half = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(c["precision"])
    if not dry:
        m = m.cuda()
        torch.cuda.synchronize()
    if half is not None:
        m = m.to(half)
    training = c.get("mode", "train") == "train"
    m.train(training)
    if c.get("checkpointing"):
        m.gradient_checkpointing_enable()
    params = sum(p.numel() for p in m.parameters())
    state = sum(t.numel() * t.element_size() for t in m.state_dict().values())
    opt = scaler = None
    autocast = contextlib.nullcontext
    if training:
        if c["optim"] == "sgd-momentum":
            opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
        else:
            opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
        if c["precision"].startswith("amp-"):
            dt = torch.bfloat16 if c["precision"] == "amp-bf16" or dry else torch.float16  # CPU autocast: bf16 only
            autocast = lambda: torch.autocast("cpu" if dry else "cuda", dtype=dt)  # noqa: E731
            if dt == torch.float16 and not dry:
                scaler = torch.amp.GradScaler("cuda")
    steps = []
    for _ in range(2 if c.get("mode") == "generate" else 3):  # a generation is long; the estimator replays two
        if not dry:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        t = time.time()
        skipped = False
        if training:
            skipped = train_step(torch, m, c, opt, scaler, batch, autocast)
        else:
            infer_step(torch, m, c, batch, dry)
        if not dry:
            torch.cuda.synchronize()
        steps.append(dict(peak_allocated=0 if dry else torch.cuda.max_memory_allocated(),
                          peak_reserved=0 if dry else torch.cuda.max_memory_reserved(),
                          secs=round(time.time() - t, 3), scaler_skipped=skipped))
    row = {k: v for k, v in c.items() if k != "model"}
    row.update(model=c["model"] if isinstance(c["model"], str) else c["id"].split("-")[0],
               mode=c.get("mode", "train"), optim=c.get("optim") if training else None,
               params=params, model_state_bytes=state,
               peak_allocated=max(s["peak_allocated"] for s in steps),
               peak_reserved=max(s["peak_reserved"] for s in steps), steps=steps,
               nvml_process_used=None if dry else nvml_used(os.getpid()),
               attn_impl=None if c["model"] == "resnet50" else "sdpa", torch=torch.__version__,
               gpu="cpu (dry run)" if dry else torch.cuda.get_device_name(0),
               num_alloc_retries=0 if dry else torch.cuda.memory_stats().get("num_alloc_retries", 0),
               model_config=model_config, dry_run=dry)
    print(json.dumps(row))


def main():
    args = [a for a in sys.argv[1:] if a != "--dry-run"]
    dry = "--dry-run" in sys.argv
    if args and args[0] == "--one":
        one(json.loads(args[1]), dry)
        return
    if not args:
        sys.exit(__doc__)
    out, only = args[0], set(args[1:])
    failed = 0
    with open(out, "a") as f:
        for c in CONFIGS:
            if only and c["id"] not in only:
                continue
            t = time.time()
            cmd = [sys.executable, __file__, "--one", json.dumps(c)] + (["--dry-run"] if dry else [])
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            except subprocess.TimeoutExpired:
                failed += 1
                print("FAILED %s: over 600 s" % c["id"], flush=True)
                continue
            line = p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""
            if p.returncode != 0 or not line.startswith("{"):
                failed += 1
                tail = (p.stderr.strip().splitlines() or ["no output"])[-1]
                print("FAILED %s (%.0f s): %s" % (c["id"], time.time() - t, tail), flush=True)
                continue
            f.write(line + "\n")
            r = json.loads(line)
            print("%-44s peak allocated %6.2f GB  reserved %6.2f GB  nvml %s  (%.0f s)" % (
                c["id"], r["peak_allocated"] / 1e9, r["peak_reserved"] / 1e9,
                "%.2f GB" % (r["nvml_process_used"] / 1e9) if isinstance(r["nvml_process_used"], int)
                else r["nvml_process_used"], time.time() - t), flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
