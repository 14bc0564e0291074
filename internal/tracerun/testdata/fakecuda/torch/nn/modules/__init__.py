from torch.nn.modules import module  # noqa: F401
