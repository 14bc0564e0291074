# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/utkuozbulak/pytorch-cnn-visualizations/issues/53
# pattern: forward hooks store every ReLU output in a list; on the GPU over many frames: CUDA out of memory
# expect: TM015
import torch
from torch.nn import ReLU

class GuidedBackprop:
    def __init__(self, model):
        self.model = model
        self.forward_relu_outputs = []
        self.update_relus()

    def update_relus(self):
        def relu_forward_hook_function(module, ten_in, ten_out):
            self.forward_relu_outputs.append(ten_out)

        for pos, module in self.model.features._modules.items():
            if isinstance(module, ReLU):
                module.register_forward_hook(relu_forward_hook_function)
