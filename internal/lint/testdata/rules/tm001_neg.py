import torch
import torch.nn.functional as F


@torch.no_grad()
def validate(model, val_loader, device):
    model.eval()
    correct = 0
    for images, target in val_loader:
        output = model(images.to(device))
        correct += output.argmax(1).eq(target.to(device)).sum().item()
    return correct


@torch.inference_mode()
def predict(net, x):
    net.eval()
    return net(x)


def evaluate(model, test_loader):
    model.eval()
    loss = 0.0
    with torch.no_grad():
        for data, target in test_loader:
            output = model(data)
            loss += F.nll_loss(output, target, reduction="sum").item()
    return loss


def run_epoch(model, loader, phase, optimizer):
    model.train() if phase == "train" else model.eval()
    for x, y in loader:
        with torch.set_grad_enabled(phase == "train"):
            out = model(x)
            loss = F.cross_entropy(out, y)
            if phase == "train":
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()


def inner_eval(model, val_loader):
    # called only under no_grad below
    return [model(x).argmax(1) for x, _ in val_loader]


def outer(model, val_loader):
    with torch.no_grad():
        return inner_eval(model, val_loader)


def saliency(model, x, target):
    # gradients w.r.t. the input are wanted in eval mode
    model.eval()
    x.requires_grad_(True)
    out = model(x)
    out[0, target].backward()
    return x.grad


def fine_tune_frozen_bn(model, train_loader, optimizer):
    model.eval()  # keep BatchNorm statistics frozen
    for x, y in train_loader:
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def train_then_eval(model, loader, optimizer):
    model.eval()
    model.train()
    for x, y in loader:
        out = model(x)
        optimizer.zero_grad()
        F.cross_entropy(out, y).backward()
        optimizer.step()


def script_level():
    torch.set_grad_enabled(False)
    model = torch.nn.Linear(4, 2)
    model.eval()
    for x in torch.randn(10, 4).split(2):
        print(model(x))


def distill_eval(teacher, val_loader):
    teacher.requires_grad_(False)
    teacher.eval()
    return [teacher(x).argmax(1) for x in val_loader]


def frozen_loop(model, val_loader):
    for p in model.parameters():
        p.requires_grad = False
    for x in val_loader:
        print(model(x).argmax(1))
