# CPU inference: a checkpoint saved from a GPU is restored onto that GPU
# (or "Attempting to deserialize object on a CUDA device but
# torch.cuda.is_available() is False" on a CPU-only host).
import torch

device = torch.device("cpu")
model = torch.load("model_best.pth")  # want: TM011
model.eval()
with torch.inference_mode():
    print(model(torch.randn(1, 3, 224, 224)).argmax(1))
