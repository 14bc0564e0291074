# Recall case for torchmem lint (bench/lint-eval). A short excerpt reconstructed
# from the thread below (the pattern only, not the original file).
# source: https://github.com/pytorch/pytorch/issues/13613
# pattern: massive inference with model.eval() but autograd on: GPU memory grows until OOM
# expect: TM001
import torch
import torchvision

model = torchvision.models.resnet50()
model = torch.nn.DataParallel(model)
model.cuda()
model.eval()
result = []
for input in test_loader:
    output = model(input)
    result.append(output.data.cpu().numpy())
