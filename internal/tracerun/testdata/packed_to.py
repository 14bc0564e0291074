"""A parameter class that quantizes as it moves to a GPU, as bitsandbytes'
Params4bit does (transformers 5 loads each weight to the GPU, then calls
Params4bit(w).to(w.device)): its to() parses the device with _parse_to and
packs two values a byte only when the device is not meta. Under the trace
a device tensor's device is the GPU's to _parse_to too. Also a CUDA
extension's import-time read of torch._C._cuda_getCurrentRawStream, which
a CPU build lacks. Exits 0 when all holds, raises otherwise."""
import torch

get_stream = torch._C._cuda_getCurrentRawStream  # what the extension reads


class Packed(torch.nn.Parameter):
    def __new__(cls, data):
        return torch.Tensor._make_subclass(cls, data, False)

    def to(self, *args, **kwargs):
        device = torch._C._nn._parse_to(*args, **kwargs)[0]
        if device is not None and device.type != "meta" and not getattr(self, "packed", False):
            self.data = torch.empty(self.numel() // 2, 1, dtype=torch.uint8, device=device)
            self.packed = True
            return self
        return super().to(*args, **kwargs)


w = torch.empty(4096, 1024, dtype=torch.bfloat16, device="cuda")  # 8 MiB
p = Packed(w).to(w.device)
del w
if not getattr(p, "packed", False):
    raise SystemExit("not packed: _parse_to(w.device) said %s" % torch._C._nn._parse_to(p.device)[0])
if torch.cuda.memory_allocated() != 2 << 20:
    raise SystemExit("allocated %d, want the packed 2 MiB" % torch.cuda.memory_allocated())
