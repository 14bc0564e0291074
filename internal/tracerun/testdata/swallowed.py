"""An op the tracer's tensors cannot run, whose error the program catches
and goes on from (as bubbliiiing's LossHistory does around
SummaryWriter.add_graph), then an error of the program's own: the trace
ends on the program's error, not the op's."""
import torch

model = torch.nn.Linear(8, 8).cuda()
x = torch.randn(4, 8, device="cuda")
try:
    torch.bincount((model(x) > 0).long().flatten())  # no values on meta: fails, caught
except Exception:
    pass
raise ValueError("dataset too small")
