# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/hirofumi0810/neural_sp/issues/168
# pattern: gradient accumulation: loss should be divided by accum_grad_n_steps before backward
# expect: TM003
import torch

def train(model, train_set, optimizer, accum_grad_n_steps):
    for step, batch in enumerate(train_set):
        loss, observation = model(batch)
        loss.backward()
        if (step + 1) % accum_grad_n_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
