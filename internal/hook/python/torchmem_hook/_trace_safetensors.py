"""safetensors checkpoints larger than the host can map (torchmem estimate
--trace, meta mode).

safe_open maps the whole file privately and writable (torch's
UntypedStorage.from_file), which the kernel counts against its commit
limit: a 48 GB Flux transformer, or a 128 GB single-file 70B model, is
refused on a 24 GB host ("unable to mmap ... Cannot allocate memory"),
though the trace reads none of its data. Where the map is refused, the
file's own header (JSON after an 8-byte length, at most MAX_HEADER) gives
each tensor's dtype and shape, and each is made without data: a host
placeholder, or a device allocation when the load names the GPU. Files the
host can map load as they always did.
"""

import errno
import json
import os
import struct

from torchmem_hook import _common, _trace_api

MAX_HEADER = 100 << 20  # safetensors' own cap on the header

# safetensors' dtype names -> torch's
DTYPES = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16", "I64": "int64",
          "I32": "int32", "I16": "int16", "I8": "int8", "U8": "uint8", "BOOL": "bool",
          "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2", "U16": "uint16", "U32": "uint32",
          "U64": "uint64"}


def install(torch, T):
    def on_import(mod):
        orig = getattr(mod, "safe_open", None)
        if orig is None or getattr(orig, "_torchmem_safe_open", False):
            return
        mod.safe_open = _wrap(torch, T, orig)

    # the package's name, and safetensors.torch's own (load_file calls it
    # by that global)
    _common.after_import({"safetensors": on_import, "safetensors.torch": on_import})


def _wrap(torch, T, orig):
    def safe_open(filename, framework="pt", *a, **k):
        try:
            return orig(filename, framework, *a, **k)
        except (RuntimeError, MemoryError, OSError) as e:
            if not refused(e):
                raise
            device = k.get("device", a[0] if a else "cpu")
            # transformers 5 materializes a checkpoint's slices in worker
            # threads, outside the tracer's (thread-local) modes, where a
            # tensor without data cannot be copied: load in this thread
            os.environ["HF_DEACTIVATE_ASYNC_LOAD"] = "1"
            return Placeholders(torch, T, filename, _trace_api.is_cuda(device))

    safe_open._torchmem_safe_open = True
    return safe_open


def refused(e):
    """Whether safe_open's error is the host refusing the map: safetensors
    0.8 raises RuntimeError("unable to mmap ... Cannot allocate memory"),
    0.4 OSError("Cannot allocate memory (os error 12)")."""
    if isinstance(e, MemoryError) or getattr(e, "errno", None) == errno.ENOMEM:
        return True
    msg = str(e)
    return "mmap" in msg or "Cannot allocate memory" in msg


def read_header(path):
    """(tensors, metadata) of a safetensors file: name -> {dtype, shape,
    data_offsets}, and its __metadata__ (None if it has none)."""
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) != 8:
            raise ValueError("%s: not a safetensors file (no header length)" % path)
        n = struct.unpack("<Q", head)[0]
        if n > MAX_HEADER:
            raise ValueError("%s: safetensors header of %d bytes, over %d" % (path, n, MAX_HEADER))
        hdr = json.loads(f.read(n).decode("utf-8"))
    meta = hdr.pop("__metadata__", None)
    return hdr, meta


class Placeholders(object):
    """safe_open's interface over the header alone: every tensor made
    without data (tensors are never read in a trace)."""

    def __init__(self, torch, T, path, cuda):
        self._torch, self._T, self._cuda = torch, T, cuda
        self._tensors, self._meta = read_header(path)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def keys(self):
        return sorted(self._tensors)

    def offset_keys(self):
        return sorted(self._tensors, key=lambda k: self._tensors[k]["data_offsets"][0])

    def metadata(self):
        return self._meta

    def get_tensor(self, name):
        info = self._tensors[name]
        return self.make(info["shape"], self.dtype(info))

    def get_tensors(self):
        return dict((k, self.get_tensor(k)) for k in self.offset_keys())

    def get_slice(self, name):
        return _Slice(self, name)

    def dtype(self, info):
        return getattr(self._torch, DTYPES[info["dtype"]])

    def make(self, shape, dtype):
        with self._T.making(self._cuda):
            return self._torch.empty(shape, dtype=dtype, device="meta")


class _Slice(object):
    """get_slice's object: shape and dtype, and indexing that makes the
    slice's tensor (a tensor-parallel loader's shard) without data."""

    def __init__(self, owner, name):
        self._owner = owner
        self._info = owner._tensors[name]

    def get_shape(self):
        return list(self._info["shape"])

    def get_dtype(self):
        return self._info["dtype"]

    def __getitem__(self, index):
        owner = self._owner
        dtype = owner.dtype(self._info)
        # the slice's shape, from an unrecorded meta tensor of the whole
        with owner._T.quietly():
            shape = owner._torch.empty(self._info["shape"], dtype=dtype, device="meta")[index].shape
        return owner.make(list(shape), dtype)
