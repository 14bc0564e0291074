# A single-GPU training script that resumes from its own checkpoint: same
# device, so nothing lands anywhere unexpected.
import torch

model = torch.nn.Linear(8, 2).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
ckpt = torch.load("last.pt")
model.load_state_dict(ckpt["model"])
for step in range(10):
    opt.zero_grad()
    model(torch.randn(4, 8, device="cuda")).sum().backward()
    opt.step()
