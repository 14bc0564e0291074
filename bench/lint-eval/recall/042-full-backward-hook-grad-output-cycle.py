# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/pytorch/pytorch/issues/82528
# pattern: full backward hook keeping grad_output with create_graph=True: cycle grad_output -> grad_fn -> graph -> hook
# expect: TM015
import torch

class GradStore:
    def __init__(self, module):
        self.grads = None
        module.register_full_backward_hook(self.hook)

    def hook(self, module, grad_input, grad_output):
        self.grads = grad_output[0]

model = torch.nn.Linear(10, 10)
store = GradStore(model)
for _ in range(100):
    out = model(torch.randn(4, 10, requires_grad=True)).sum()
    out.backward(create_graph=True)
