# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/lucidrains/imagen-pytorch/pull/132
# pattern: torch.load(str(path)) loads the state dict to cuda:0 in each process of an accelerate job
# expect: TM011
import torch
from accelerate import Accelerator

class ImagenTrainer:
    def __init__(self, imagen):
        self.accelerator = Accelerator()
        self.imagen = imagen

    def load(self, path):
        loaded_obj = torch.load(str(path))
        self.imagen.load_state_dict(loaded_obj["model"])
        return loaded_obj
