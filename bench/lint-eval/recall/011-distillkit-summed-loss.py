# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/agokrani/distillKitPlus/issues/5
# pattern: loss summed across accumulation steps without dividing: reported loss scales with the step count
# expect: TM003
import torch

def train(student, loader, optimizer, gradient_accumulation_steps):
    for step, batch in enumerate(loader):
        loss = student(**batch).loss
        loss.backward()
        if (step + 1) % gradient_accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
