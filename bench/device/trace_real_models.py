#!/usr/bin/env python3
"""Training loops for bench/device/trace_real.sh: the same unmodified
script is run by `torchmem estimate --trace` (meta tensors) and by
`torchmem estimate --trace --real` (the GPU), which both stop it after
--steps optimizer steps; the loop itself would run STEPS (100) steps.

    python3 bench/device/trace_real_models.py hf-gpt2     # GPT2LMHeadModel.from_config(GPT2Config()), 124M
    python3 bench/device/trace_real_models.py hf-llama    # LlamaForCausalLM.from_config, ~0.4B, 8 layers
    python3 bench/device/trace_real_models.py resnet50    # torchvision resnet50, SGD momentum
    python3 bench/device/trace_real_models.py hf-wav2vec2 # Wav2Vec2ForCTC (base config), CTC loss
    python3 bench/device/trace_real_models.py --check     # exit 0 when transformers imports, 1 if not

Data is random, made on the GPU, as estimate_measure.py's rows are;
losses are the models' own (labels=input_ids for the causal LMs,
cross-entropy for ResNet-50). Everything runs in fp32 with AdamW
(foreach, torch's default on CUDA), except ResNet-50 (SGD momentum);
attention is transformers' default for the version installed.
"""
import sys

import torch
import torch.nn.functional as F

STEPS = 100


def lm(model, vocab, batch, seq):
    model = model.cuda()
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for step in range(STEPS):
        ids = torch.randint(0, vocab, (batch, seq), device="cuda")
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        print("step", step, file=sys.stderr)


def hf_gpt2():
    from transformers import AutoModelForCausalLM, GPT2Config

    cfg = GPT2Config()  # gpt2 (124M): 12 layers, 768 wide, vocab 50257
    lm(AutoModelForCausalLM.from_config(cfg), cfg.vocab_size, 8, 512)


def hf_llama():
    from transformers import AutoModelForCausalLM, LlamaConfig

    cfg = LlamaConfig(hidden_size=1024, intermediate_size=2816, num_hidden_layers=8, num_attention_heads=16,
                      num_key_value_heads=16, vocab_size=32000, max_position_embeddings=2048)
    lm(AutoModelForCausalLM.from_config(cfg), cfg.vocab_size, 4, 512)


def resnet50():
    import torchvision

    model = torchvision.models.resnet50().cuda()
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for step in range(STEPS):
        x = torch.randn(32, 3, 224, 224, device="cuda")
        y = torch.randint(0, 1000, (32,), device="cuda")
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        print("step", step, file=sys.stderr)


def hf_wav2vec2():
    """wav2vec2-base fine-tuned with CTC as the Hugging Face blog does it
    (frozen feature encoder, AdamW), batch 8 of 10 s at 16 kHz; LayerDrop
    off, so the meta run and the GPU run train the same layers. Labels
    come from the host (a collator's), padded with -100."""
    from transformers import Wav2Vec2Config, Wav2Vec2ForCTC

    cfg = Wav2Vec2Config(vocab_size=32, layerdrop=0.0, ctc_loss_reduction="mean", pad_token_id=0)
    model = Wav2Vec2ForCTC(cfg).cuda()
    model.freeze_feature_encoder()
    model.train()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    g = torch.Generator().manual_seed(0)
    for step in range(STEPS):
        audio = torch.randn(8, 160000, device="cuda")
        lengths = [150 - 9 * i for i in range(8)]
        labels = torch.full((8, max(lengths)), -100, dtype=torch.long)
        for i, n in enumerate(lengths):
            labels[i, :n] = torch.randint(1, 32, (n,), generator=g)
        loss = model(input_values=audio, labels=labels.cuda()).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        print("step", step, file=sys.stderr)


def check():
    try:
        import transformers  # noqa: F401
    except Exception:
        sys.exit(1)
    sys.exit(0)


if __name__ == "__main__":
    {"hf-gpt2": hf_gpt2, "hf-llama": hf_llama, "resnet50": resnet50, "hf-wav2vec2": hf_wav2vec2, "--check": check}[sys.argv[1]]()
