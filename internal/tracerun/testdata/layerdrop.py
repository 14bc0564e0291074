"""Layers a step skips (torchmem's own test script): four 256-wide
layers, the third skipped in the first three steps as LayerDrop may skip
one (wav2vec2, HuBERT), Adam. Traced for two steps, the third layer gets
no gradient and Adam makes no states for it."""
import torch
import torch.nn as nn

dev = "cuda" if torch.cuda.is_available() else "cpu"
layers = nn.ModuleList(nn.Linear(256, 256) for _ in range(4)).to(dev)
opt = torch.optim.Adam(layers.parameters(), lr=1e-3)
for step in range(4):
    x = torch.randn(32, 256, device=dev)
    for i, layer in enumerate(layers):
        if i == 2 and step < 3:
            continue  # dropped this step
        x = torch.relu(layer(x))
    opt.zero_grad()
    x.sum().backward()
    opt.step()
