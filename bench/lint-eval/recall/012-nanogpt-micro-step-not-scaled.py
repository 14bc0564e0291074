# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/karpathy/nanoGPT/issues/206
# pattern: train.py: loss.backward() for every micro-step of the accumulation loop, loss never divided by gradient_accumulation_steps
# expect: TM020
import torch

def train(model, get_batch, optimizer, gradient_accumulation_steps, max_iters):
    for iter_num in range(max_iters):
        for micro_step in range(gradient_accumulation_steps):
            X, Y = get_batch("train")
            logits, loss = model(X, Y)
            loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
