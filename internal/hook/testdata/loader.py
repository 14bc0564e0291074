# A DataLoader with 2 workers (start method from argv: fork or spawn)
# feeding 6 optimizer steps.
import sys

import torch
from torch.utils.data import DataLoader, TensorDataset


def main():
    ctx = sys.argv[1] if len(sys.argv) > 1 else "fork"
    ds = TensorDataset(torch.randn(96, 8), torch.randn(96, 1))
    dl = DataLoader(ds, batch_size=16, num_workers=2, multiprocessing_context=ctx)
    model = torch.nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for x, y in dl:
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    print("done")


if __name__ == "__main__":
    main()
