from torch.optim import optimizer
