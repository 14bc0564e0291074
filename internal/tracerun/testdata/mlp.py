# A small MLP trained with AdamW; the script is written for a GPU and knows
# nothing of torchmem.
import torch
import torch.nn as nn

torch.manual_seed(0)
dev = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10)).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(5):
    x = torch.randn(32, 64).to(dev)
    y = torch.randint(0, 10, (32,), device=dev)
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    print("step", step, "loss", loss.item())
