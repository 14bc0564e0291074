# A stand-in for torch 2.x with the surface `torchmem estimate --trace
# --real` (torchmem_hook/_trace_real.py) uses: torch.cuda's allocator
# history, _snapshot() in torch 2.2+'s format, memory_stats() and the
# device's properties; the global module forward and optimizer step hooks;
# autograd.backward. It lets the real mode run end to end, Python to Go,
# on a host without a GPU (../fakereal.py drives it).
__version__ = "2.11.0+fake"

from torch import cuda, nn, autograd, optim  # noqa: E402,F401
