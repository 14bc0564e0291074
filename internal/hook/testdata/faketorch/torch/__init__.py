# A stand-in for torch with the CUDA surface the hook uses, to test the
# hook's CUDA paths on machines without a GPU. State is module-global.
import sys
import types

__version__ = "2.11.0+fake"
version = types.SimpleNamespace(cuda="13.0")
calls = []  # what the hook did to "CUDA", for the test script to print
step_resets = 0  # peak resets through torch._C (the step peaks)


class _Cuda(types.ModuleType):
    def __init__(self):
        super().__init__("torch.cuda")
        self._initialized = False
        self._queued = []
        self.reserved = 0
        self.allocated = 0
        self.peak = 0
        self.peak_reserved = 0
        self.memory = types.SimpleNamespace(_record_memory_history=self._record, _dump_snapshot=self._dump)

    def is_initialized(self):
        return self._initialized

    def _lazy_call(self, fn):
        if self._initialized:
            fn()
        else:
            self._queued.append(fn)

    def init(self):  # what the program's first CUDA call does
        self._initialized = True
        for fn in self._queued:
            fn()

    def current_device(self):
        assert self._initialized, "hook initialised CUDA"
        return 0

    def device_count(self):
        return 2

    def memory_stats(self, device=None):
        assert self._initialized, "hook initialised CUDA"
        r = self.reserved if device == 0 else 0
        a = self.allocated if device == 0 else 0
        return {"allocated_bytes.all.current": a, "reserved_bytes.all.current": r, "active_bytes.all.current": a,
                "inactive_split_bytes.all.current": r - a, "allocated_bytes.all.peak": self.peak,
                "reserved_bytes.all.peak": max(r, self.peak_reserved), "num_alloc_retries": 1, "num_ooms": len(_C.observers) and 0}

    def empty_cache(self):
        calls.append("empty_cache")
        self.reserved = self.allocated

    def reset_peak_memory_stats(self, device=None):
        calls.append("reset_peak_memory_stats(%s)" % device)
        self.peak = self.allocated

    def _record(self, enabled="all", context="all", stacks="all", max_entries=0):
        calls.append("record_memory_history(stacks=%s,max_entries=%d)" % (stacks, max_entries))

    def _dump(self, path):
        calls.append("dump_snapshot")
        with open(path, "wb") as f:
            f.write(b"\x80\x04fake snapshot")


class _C_mod(types.ModuleType):
    def __init__(self):
        super().__init__("torch._C")
        self.observers = []

    def _cuda_attach_out_of_memory_observer(self, fn):
        self.observers.append(fn)

    # The two calls the step peaks use (torch.cuda.memory's own
    # max_memory_allocated and reset_peak_memory_stats wrap them).
    def _cuda_memoryStats(self, device):
        assert cuda._initialized, "hook initialised CUDA"
        return {"allocated_bytes": {"all": {"peak": cuda.peak if device == 0 else 0}},
                "reserved_bytes": {"all": {"peak": max(cuda.reserved, cuda.peak_reserved) if device == 0 else 0}}}

    def _cuda_resetPeakMemoryStats(self, device):
        global step_resets
        step_resets += 1
        cuda.peak, cuda.peak_reserved = cuda.allocated, cuda.reserved


cuda = _Cuda()
_C = _C_mod()
sys.modules["torch.cuda"] = cuda
sys.modules["torch._C"] = _C


def oom(device, alloc, device_alloc, device_free):
    """What the caching allocator does on a failed cudaMalloc."""
    for fn in _C.observers:
        fn(device, alloc, device_alloc, device_free)
    raise OutOfMemoryError("CUDA out of memory. Tried to allocate %d bytes" % alloc)


class OutOfMemoryError(RuntimeError):
    pass


cuda.OutOfMemoryError = OutOfMemoryError
from torch import optim  # noqa: E402
