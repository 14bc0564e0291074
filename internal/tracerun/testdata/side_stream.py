"""Allocations on side streams, each way a program makes one current:
torch.cuda.stream(s), torch.cuda.StreamContext, torch.cuda.set_stream.
The caching allocator keeps what a stream frees for that stream, so the
last tensor, on the default stream, cannot take the first one's freed
segment: 100 MiB reserved, 50 if every stream were one."""
import torch

s = torch.cuda.Stream()
hi = torch.cuda.Stream(priority=-1)
assert s != hi and torch.cuda.current_stream() == torch.cuda.default_stream()
with torch.cuda.stream(s):
    a = torch.empty(30 << 20, dtype=torch.uint8, device="cuda")  # stream 1: a 30 MiB segment
    assert torch.cuda.current_stream() == s
with torch.cuda.StreamContext(hi):
    h = torch.empty(2 << 20, dtype=torch.uint8, device="cuda")  # stream 33: a 20 MiB segment
torch.cuda.set_stream(s)
c = torch.empty(4 << 20, dtype=torch.uint8, device="cuda")  # stream 1 again: another 20 MiB
torch.cuda.set_stream(torch.cuda.default_stream())
del a
b = torch.empty(30 << 20, dtype=torch.uint8, device="cuda")  # the default stream: 30 MiB more
assert torch.cuda.current_stream() == torch.cuda.default_stream()


@torch.cuda.nvtx.range("check")  # a decorator too, as torch's is
def check():
    with torch.cuda.nvtx.range("inner"):
        assert torch.cuda.current_stream() == torch.cuda.default_stream()


check()
with hi:  # torch.Stream as a context (torch >= 2.5)
    assert torch.cuda.current_stream() == hi
assert torch.cuda.current_stream() == torch.cuda.default_stream()
