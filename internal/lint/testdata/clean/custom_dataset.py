# A Dataset keeping its index in numpy arrays, a CPU collate_fn with padding,
# per-worker seeding, and the batch moved to the GPU in the loop.
import random

import numpy as np
import torch
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset


class TokenDataset(Dataset):
    def __init__(self, tokens_path, offsets_path):
        self.tokens = np.load(tokens_path, mmap_mode="r")
        self.offsets = np.load(offsets_path)
        self.vocab = ["<pad>", "<unk>", "<bos>", "<eos>"]

    def __len__(self):
        return len(self.offsets) - 1

    def __getitem__(self, idx):
        start, end = self.offsets[idx], self.offsets[idx + 1]
        return torch.from_numpy(np.asarray(self.tokens[start:end], dtype=np.int64))


def collate(batch):
    lengths = torch.tensor([len(x) for x in batch])
    return pad_sequence(batch, batch_first=True, padding_value=0), lengths


def seed_worker(worker_id):
    worker_seed = torch.initial_seed() % 2 ** 32
    np.random.seed(worker_seed)
    random.seed(worker_seed)


def make_loader(args):
    g = torch.Generator()
    g.manual_seed(0)
    ds = TokenDataset(args.tokens, args.offsets)
    return DataLoader(ds, batch_size=args.batch_size, shuffle=True, collate_fn=collate,
                      num_workers=args.workers, worker_init_fn=seed_worker, generator=g,
                      pin_memory=True)


def train(model, loader, optimizer, device, epochs):
    criterion = torch.nn.CrossEntropyLoss(ignore_index=0)
    for epoch in range(epochs):
        running_loss = 0.0
        for step, (tokens, lengths) in enumerate(loader):
            tokens = tokens.to(device, non_blocking=True)
            logits = model(tokens[:, :-1])
            loss = criterion(logits.reshape(-1, logits.size(-1)), tokens[:, 1:].reshape(-1))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            running_loss += loss.item()
        print(epoch, running_loss / max(1, step + 1))
