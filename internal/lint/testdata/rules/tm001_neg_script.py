# An inference script that switches autograd off once at module level.
import torch

torch.set_grad_enabled(False)


def run(model, test_loader):
    model.eval()
    return [model(x).argmax(1) for x in test_loader]


def run_loop(model, test_loader):
    out = []
    for x in test_loader:
        out.append(model(x).argmax(1).cpu())
    return out
