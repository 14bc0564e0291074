# Fix fixture: the evaluation of pytorch/examples mnist/main.py (test()),
# a DDP resume as in the PyTorch DDP tutorial (torch.load of a checkpoint
# in every rank), and the forms --fix must leave alone.
import torch
import torch.distributed as dist
import torch.nn.functional as F


def test(model, device, test_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():  # evaluation only
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction='sum').item()  # sum up batch loss
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()

    test_loss /= len(test_loader.dataset)
    return test_loss, correct


def predict(model, loader):
    model.eval()
    outputs = []
    with torch.no_grad():  # kept: the outputs leave the block as tensors
        for x in loader:
            outputs.append(model(x))
    return outputs


def update_ema(ema_model, model, decay):
    with torch.no_grad():  # kept: not an evaluation, in-place updates
        for ema_p, p in zip(ema_model.parameters(), model.parameters()):
            ema_p.mul_(decay).add_(p, alpha=1 - decay)


def validate(model, loader, meter):
    model.eval()
    with torch.no_grad():  # kept: meter.update may keep what it is given
        for x, y in loader:
            meter.update(model(x), y)


def train(rank, model, optimizer, loader, device):
    dist.init_process_group("nccl", rank=rank, world_size=2)
    state = torch.load(
        "checkpoint.pt",  # written by rank 0
    )
    model.load_state_dict(state)
    mask = torch.zeros(4, 4).cuda()
    noise = torch.randn(8, dtype=torch.float16).to(device)  # noise
    half = torch.ones(3).to(torch.float16)  # kept: a dtype, not a device
    pinned = torch.empty(1024, pin_memory=True).cuda()  # kept: pinned staging buffer
    ignored = torch.zeros(2).cuda()  # torchmem: ignore
    for x, y in loader:
        optimizer.zero_grad(set_to_none=False)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
