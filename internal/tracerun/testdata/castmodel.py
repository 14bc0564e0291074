"""A model moved to the GPU and cast to half there, then the program ends
(an inference script's set-up): the fp32 copies .half() frees were weights
and buffers, never input data."""
import torch.nn as nn

model = nn.Sequential(nn.Linear(64, 64), nn.BatchNorm1d(64)).cuda().half()
