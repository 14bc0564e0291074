"""A CUDA prefetch thread (prefetch_generator's BackgroundGenerator, which
DataLoaderX wraps a DataLoader in, with .cuda() of each batch in its run):
the batches it moves are GPU memory, input data, made in a thread the
program started; DataLoader's pin-memory thread runs traced too."""
import queue
import threading

import torch
from torch.utils.data import DataLoader, TensorDataset


class BackgroundGenerator(threading.Thread):
    def __init__(self, gen, max_prefetch=1):
        super().__init__(daemon=True)
        self.q, self.gen = queue.Queue(max_prefetch), gen
        self.start()

    def run(self):
        for item in self.gen:
            self.q.put([t.cuda(non_blocking=True) for t in item])
        self.q.put(None)

    def __iter__(self):
        return self

    def __next__(self):
        item = self.q.get()
        if item is None:
            raise StopIteration
        return item


ds = TensorDataset(torch.randn(256, 3, 32, 32), torch.randint(0, 10, (256,)))
dl = DataLoader(ds, batch_size=32, num_workers=1, pin_memory=True)
model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                            torch.nn.Linear(8 * 30 * 30, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in BackgroundGenerator(dl):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
