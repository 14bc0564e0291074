# Built on the CPU, copied to the GPU at once (the performance tuning
# guide's torch.rand(size).cuda() example; DCGAN-style noise per batch).
import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
fixed_noise = torch.randn(64, 100, 1, 1).to(device)  # once: not reported


def train(netG, dataloader):
    for i, data in enumerate(dataloader):
        b_size = data[0].size(0)
        noise = torch.randn(b_size, 100, 1, 1).cuda()  # want: TM019
        label = torch.full((b_size,), 1.0).to(device=device)  # want: TM019
        mask = torch.zeros(b_size, dtype=torch.bool).to("cuda:0", non_blocking=True)  # want: TM019
        netG(noise)
