"""torch.jit.trace of the model on the host before training, as
TensorBoard's SummaryWriter.add_graph does it (bubbliiiing's LossHistory,
inside a try that ignores any error), then the model trained on the GPU
for two steps. Meta mode cannot jit-trace: the trace returns the module
(one jittrace note) and the program goes on."""
import torch

model = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(16, 16, 3, padding=1))
try:
    graph = torch.jit.trace(model, torch.randn(2, 3, 32, 32)).graph  # add_graph reads the graph
except Exception:
    pass
model.cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    loss = model(torch.randn(4, 3, 64, 64, device="cuda")).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
