#!/usr/bin/env python3
"""One row of the H200 calibration capture (internal/estimate/testdata/
calibration.jsonl), as a training script: for `torchmem estimate --trace` to
predict without a GPU what the capture measured on one.

    torchmem estimate --trace --steps 3 --gpu H200 --json -- \
        python3 bench/trace/calibration_job.py internal/estimate/testdata/calibration.jsonl ROW_ID

As the capture ran (the fixtures' README): the model built from the row's
config (Hugging Face: AutoConfig.for_model with the full config, SDPA
attention; torchvision: the named model), moved to the GPU in fp32 and cast
there for pure bf16; random token ids (labels = input_ids, the model's own
loss; use_cache off) or random images and class labels (cross-entropy),
made on the GPU; `amp-bf16` is autocast over fp32 weights; AdamW and SGD
with momentum 0.9 are PyTorch's defaults (foreach on CUDA); gradients set
to None after each step; three steps (inference: three no_grad forwards).

An all-ones attention mask is passed: without one, transformers 4.53.1 to
4.5x (packed-sequence detection from the position ids; transformers issue
#41856) builds a (batch, 1, seq, seq) causal mask for SDPA on torch >= 2.6
where the capture's transformers 5.17 leaves causality to the kernel; with
one, `padding_mask.all()` lets both skip it (on meta the tracer knows the
mask's values).
"""
import json
import sys

import torch


def row(path, rid):
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r.get("id") == rid:
                return r
    sys.exit("%s: no row %r" % (path, rid))


def build(r):
    cfg = r.get("model_config") or {}
    if "torchvision" in cfg or r["model"] in ("resnet50", "vit_b_16"):
        import torchvision
        name = cfg.get("torchvision", r["model"])
        m = getattr(torchvision.models, name)()
        size = 224

        def batch():
            return dict(x=torch.randn(r["batch"], 3, size, size, device="cuda"),
                        y=torch.randint(0, 1000, (r["batch"],), device="cuda"))
        return m, batch
    import transformers
    cfg = dict(cfg)
    kind = cfg.pop("model_type")
    for k in ("transformers_version", "architectures", "dtype", "torch_dtype", "_name_or_path"):
        cfg.pop(k, None)
    conf = transformers.AutoConfig.for_model(kind, **cfg)
    auto = transformers.AutoModelForMaskedLM if kind == "bert" else transformers.AutoModelForCausalLM
    m = auto.from_config(conf, attn_implementation="sdpa")

    def batch():
        ids = torch.randint(0, conf.vocab_size, (r["batch"], r["seq"]), device="cuda")
        d = dict(input_ids=ids, labels=ids, attention_mask=torch.ones_like(ids))
        if kind != "bert":
            d["use_cache"] = False
        return d
    return m, batch


def main():
    r = row(sys.argv[1], sys.argv[2])
    m, batch = build(r)
    m = m.cuda()
    if r["precision"] == "bf16":
        m = m.to(torch.bfloat16)
    amp = r["precision"] == "amp-bf16"
    if r["mode"] != "train":
        m.eval()
        with torch.no_grad():
            for _ in range(3):
                d = batch()
                d.pop("labels", None)
                m(d["x"]) if "x" in d else m(**d)
        return
    m.train()
    if r["optim"] == "sgd-momentum":
        opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
    else:
        opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    for _ in range(3):
        d = batch()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=amp):
            if "x" in d:
                loss = torch.nn.functional.cross_entropy(m(d["x"]), d["y"])
            else:
                loss = m(**d).loss
        loss.backward()
        del loss, d
        opt.step()
        opt.zero_grad(set_to_none=True)


if __name__ == "__main__":
    main()
