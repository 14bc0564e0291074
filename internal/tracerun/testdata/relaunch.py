"""A program that starts copies of itself, one per further GPU, as
Lightning's DDP does (python /abs/script.py ARGS with LOCAL_RANK=1..):
under the tracer each copy ends as it imports torch, saying so (the trace
is rank 0's), instead of running untraced on the host's GPUs and waiting
for ranks that never come. The script checks that. Its data loader's
workers, started by spawn (as forkserver, Python 3.14's default), import
this module with the program's sys.argv too: they are not copies, and run.

usage: relaunch.py COPIES
"""
import os
import subprocess
import sys

import torch


class Batches(torch.utils.data.Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        return torch.randn(64)


def main():
    copies = int(sys.argv[1])
    if "LOCAL_RANK" not in os.environ:
        cmd = [sys.executable, os.path.abspath(__file__)] + sys.argv[1:]
        procs = [subprocess.Popen(cmd, env=dict(os.environ, LOCAL_RANK=str(r)), stderr=subprocess.PIPE)
                 for r in range(1, copies + 1)]
        for p in procs:
            err = p.communicate(timeout=300)[1].decode(errors="replace")
            assert p.returncode == 0 and "is not run" in err, (p.returncode, err[-400:])
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 64)).cuda()
    opt = torch.optim.Adam(model.parameters())
    loader = torch.utils.data.DataLoader(Batches(), batch_size=8, num_workers=2, multiprocessing_context="spawn")
    for x in loader:
        model(x.cuda()).sum().backward()
        opt.step()
        opt.zero_grad()


if __name__ == "__main__":
    main()
