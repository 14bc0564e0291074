"""A model whose first forward raises in a submodule, caught by the
program, then another model trained: what the training makes is not the
raising modules' (torch >= 2.1 calls the tracer's forward hook on a raise
too; before, the tracer could not tell)."""
import torch


class Raiser(torch.nn.Module):
    def forward(self, x):
        raise ValueError("first call")


class Flaky(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.check = Raiser()

    def forward(self, x):
        return self.check(x)


flaky = Flaky().cuda()
model = torch.nn.Linear(8, 8).cuda()
try:
    flaky(torch.randn(2, 8, device="cuda"))
except ValueError:
    pass
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    model(torch.randn(4, 8, device="cuda")).sum().backward()
    opt.step()
    opt.zero_grad()
