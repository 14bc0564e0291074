"""A program that sizes itself by the GPU's free memory, as accelerate's
device_map="auto" does, and refuses as transformers' bitsandbytes
quantizer refuses a model that does not fit: it needs 40 GiB."""
import torch

need = 40 << 30
free, total = torch.cuda.mem_get_info()
if free < need:
    raise ValueError("Some modules are dispatched on the CPU or the disk. Make sure you have enough GPU RAM "
                     "to fit the quantized model.")
x = torch.empty(need, dtype=torch.uint8, device="cuda")
