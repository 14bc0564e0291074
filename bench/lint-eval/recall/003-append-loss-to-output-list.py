# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/TRI-ML/packnet-sfm/pull/51
# pattern: Fix memory leak: detach loss before appending it to the training output list
# expect: TM002
import torch

def train_epoch(model, dataloader, optimizer):
    outputs = []
    for batch in dataloader:
        output = model(batch)
        loss = output["loss"]
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        outputs.append(loss)
    return outputs
