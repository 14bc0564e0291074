# A DistributedDataParallel script in the style of the PyTorch DDP tutorial,
# launched with torchrun.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.optim as optim
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class ToyModel(nn.Module):
    def __init__(self):
        super(ToyModel, self).__init__()
        self.net1 = nn.Linear(10, 10)
        self.relu = nn.ReLU()
        self.net2 = nn.Linear(10, 5)

    def forward(self, x):
        return self.net2(self.relu(self.net1(x)))


class RandomDataset(Dataset):
    def __init__(self, n):
        self.x = torch.randn(n, 10)
        self.y = torch.randn(n, 5)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def demo_checkpoint(rank, ddp_model, optimizer, loss_fn, loader, epochs):
    CHECKPOINT_PATH = "/tmp/model.checkpoint"
    if rank == 0:
        torch.save(ddp_model.state_dict(), CHECKPOINT_PATH)
    dist.barrier()
    map_location = {"cuda:%d" % 0: "cuda:%d" % rank}
    ddp_model.load_state_dict(torch.load(CHECKPOINT_PATH, map_location=map_location, weights_only=True))

    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        epoch_loss = torch.zeros(1, device=rank)
        for x, y in loader:
            x, y = x.to(rank, non_blocking=True), y.to(rank, non_blocking=True)
            optimizer.zero_grad()
            outputs = ddp_model(x)
            loss = loss_fn(outputs, y)
            loss.backward()
            optimizer.step()
            epoch_loss += loss.detach()
        dist.all_reduce(epoch_loss, op=dist.ReduceOp.SUM)
        if rank == 0:
            print(f"epoch {epoch} loss {epoch_loss.item() / dist.get_world_size():.4f}")


def main():
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    model = ToyModel().to(rank)
    ddp_model = DDP(model, device_ids=[rank])
    loss_fn = nn.MSELoss()
    optimizer = optim.SGD(ddp_model.parameters(), lr=0.001)
    dataset = RandomDataset(4096)
    loader = DataLoader(dataset, batch_size=32, sampler=DistributedSampler(dataset),
                        num_workers=2, pin_memory=True, persistent_workers=True)
    demo_checkpoint(rank, ddp_model, optimizer, loss_fn, loader, epochs=3)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
