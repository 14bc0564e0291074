import torch

torch.autograd.set_detect_anomaly(True)  # want: TM014


def train(model, x):
    with torch.autograd.detect_anomaly():  # want: TM014
        model(x).sum().backward()
