# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/hpcaitech/ColossalAI/issues/2639
# pattern: dummy dataset generates random data on the CUDA device inside workers (num_workers=4): initialization error
# expect: TM007
import torch
from torch.utils.data import Dataset, DataLoader

class WebtextDataset(Dataset):
    def __init__(self, length, seq_len, vocab_size):
        self.length = length
        self.seq_len = seq_len
        self.vocab_size = vocab_size

    def __len__(self):
        return self.length

    def __getitem__(self, idx):
        input_ids = torch.randint(0, self.vocab_size, (self.seq_len,), device="cuda")
        return input_ids, input_ids

loader = DataLoader(WebtextDataset(1000, 1024, 50257), batch_size=4, num_workers=4)
