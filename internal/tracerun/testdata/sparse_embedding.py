"""Sparse embedding gradients (torchmem's own test script, DLRM-like): an
EmbeddingBag and an Embedding with sparse=True and a dense MLP, trained a
few steps with the optimizer argv[1] names:

  sgd         torch.optim.SGD: param.add_(sparse gradient)
  sgdm        SGD with momentum: the buffer is a sparse clone, then grows
              by concatenation (buf.mul_(m).add_(grad))
  adagrad     Adagrad's sparse path: coalesce, sparse_mask, .new(...)
  sparseadam  SparseAdam for the tables, Adam for the MLP
  accumulate  SGD, two backwards a step: the second adds into the first's
              sparse gradients
  clip        SGD after clip_grad_norm_ (the sparse gradients' norms)

argv[2]: "known" takes the indices from the host (their values known,
with repeats: 200 distinct of 512), "device" draws them on the device.
argv[3] "big" (optional): tables of 200,000 x 128, 2,048 x 32 lookups
(50,000 distinct), where the sparse tensors outweigh cuBLAS's workspace
(bench/device/trace_real.sh's rows).
"""
import sys

import torch
import torch.nn as nn

opt_name, where = sys.argv[1], sys.argv[2]
dev = "cuda" if torch.cuda.is_available() else "cpu"
V, D, B, L, ROWS, IDS = 5000, 32, 64, 8, 200, 50
if sys.argv[3:] == ["big"]:
    V, D, B, L, ROWS, IDS = 200000, 128, 2048, 32, 50000, 1000


class Rec(nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(V, D, mode="sum", sparse=True)
        self.emb = nn.Embedding(V, D, sparse=True)
        self.mlp = nn.Sequential(nn.Linear(2 * D, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, idx, off, ids):
        return self.mlp(torch.cat([self.bag(idx, off), self.emb(ids)], 1))


torch.manual_seed(0)
m = Rec().to(dev)
tables = [m.bag.weight, m.emb.weight]
if opt_name in ("sgd", "accumulate", "clip"):
    opts = [torch.optim.SGD(m.parameters(), lr=0.1)]
elif opt_name == "sgdm":
    opts = [torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)]
elif opt_name == "adagrad":
    opts = [torch.optim.Adagrad(m.parameters(), lr=0.1)]
elif opt_name == "sparseadam":
    opts = [torch.optim.SparseAdam(tables, lr=1e-3), torch.optim.Adam(m.mlp.parameters(), lr=1e-3)]
else:
    raise SystemExit("unknown optimizer " + opt_name)


def batch():
    if where == "known":
        idx = (torch.arange(B * L) * 7 % ROWS).to(dev)
        ids = (torch.arange(B) * 3 % IDS).to(dev)
    else:
        idx = torch.randint(0, V, (B * L,), device=dev)
        ids = torch.randint(0, V, (B,), device=dev)
    off = torch.arange(0, B * L, L, device=dev)
    return idx, off, ids, torch.randn(B, 1, device=dev)


for step in range(3):
    for o in opts:
        o.zero_grad()
    for _ in range(2 if opt_name == "accumulate" else 1):
        idx, off, ids, y = batch()
        loss = nn.functional.mse_loss(m(idx, off, ids), y)
        loss.backward()
    if opt_name == "clip":
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
    for o in opts:
        o.step()
print("grad is sparse:", m.bag.weight.grad is not None and m.bag.weight.grad.is_sparse)
