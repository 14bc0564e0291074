from torch.nn import modules  # noqa: F401
