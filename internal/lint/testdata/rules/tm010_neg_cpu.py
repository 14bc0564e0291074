# The file chooses the CPU: outputs kept in a list are host memory.
import torch

device = torch.device("cpu")


def predict(model, dataloader):
    predictions = []
    with torch.no_grad():
        for x, y in dataloader:
            predictions.append(model(x.to(device)))
    return torch.cat(predictions)


def collect():
    net = torch.nn.Linear(2, 2)
    outs = []
    with torch.no_grad():
        for batch in [torch.zeros(2)]:
            outs.append(net(batch))
    return outs
