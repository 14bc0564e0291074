# numpy and text payloads saved with torch.save in a multi-process job.
import os

import numpy as np
import torch
from torch.nn.parallel import DistributedDataParallel

feats = np.asarray(torch.load("features.pt"))
emb = torch.load(os.path.join("cache", "embeddings.npy"))
vocab = torch.load(f"{os.getcwd()}/vocab.json")


def train(model):
    ddp = DistributedDataParallel(model)
    loss = ddp(torch.randn(4, 8)).sum()
    loss.backward()
