# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/referit3d/referit3d/issues/5
# pattern: Heavy memory leak in DataLoader triggered by copy-on-access of a big dict `scans` shared by all workers (40 GB)
# expect: TM006
import torch
from torch.utils.data import Dataset, DataLoader

class ListeningDataset(Dataset):
    def __init__(self, references, scans, vocab):
        self.references = references
        self.scans = {}
        for scan_id, scan in scans.items():
            self.scans[scan_id] = scan
        self.vocab = vocab

    def __len__(self):
        return len(self.references)

    def __getitem__(self, index):
        ref = self.references.iloc[index]
        scan = self.scans[ref["scan_id"]]
        return scan.pc, ref["utterance"]

def make_loader(references, scans, vocab):
    return DataLoader(ListeningDataset(references, scans, vocab), batch_size=16, num_workers=8)
