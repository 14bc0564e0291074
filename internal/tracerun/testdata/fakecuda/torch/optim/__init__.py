from torch.optim import optimizer  # noqa: F401
