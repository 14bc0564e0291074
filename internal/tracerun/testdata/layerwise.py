# A model whose __init__ runs its layers one by one before the model is
# ever called (yolov5's DetectionModel builds its strides through
# self.forward, a plain method call, so each layer of its Sequential is
# the outermost module called): the training forward's memory must still
# be named by the paths from the model (model.1.lin), not from each layer.
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(64, 64)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.lin(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(Block(), Block(), Block())
        self.forward(torch.zeros(1, 64))

    def forward(self, x):
        for m in self.model:
            x = m(x)
        return x


net = Net().cuda()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(2):
    net(torch.randn(32, 64, device="cuda")).sum().backward()
    opt.step()
    opt.zero_grad()
