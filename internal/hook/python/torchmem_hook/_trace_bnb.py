"""torchmem estimate --trace of a bitsandbytes job: QLoRA (a 4-bit base
from transformers' BitsAndBytesConfig, PEFT's adapters) and bitsandbytes'
8-bit and paged optimizers.

bitsandbytes (0.46 and later) declares its kernels as torch.library ops
with fake kernels: on the tracer's meta tensors quantize_4bit,
dequantize_4bit, the int8 matmuls (and from 0.47 the optimizers'
updates) run as those, with the shapes and dtypes the GPU's kernels give,
and nothing here replaces them. 0.46's optimizer updates, still native
calls, work in place and allocate nothing: they do nothing here.
What the tracer supplies besides:

  - paged optimizers (paged_adamw_8bit, paged_adamw_32bit, ...) keep each
    state of 1e5 elements or more in CUDA managed memory
    (cudaMallocManaged through the native library's cget_managed_ptr),
    outside PyTorch's caching allocator: max_memory_allocated() never sees
    it, nvidia-smi does while it is resident. Here get_paged() makes the
    buffer as a tensor the trace does not count (the program's own meta
    tensor; a host tensor in the tests' CPU mode) and says its bytes in an
    M event; filling and prefetching it (native calls) do what they would
    to its values, which meta tensors have none of.
  - LLM.int8 loading (load_in_8bit): transformers copies each weight to the
    host and quantizes it as it goes back (Int8Params(w.to("cpu")).to(w's
    device)). Its matmuls hold back outlier columns (threshold 6.0), a
    number that depends on the activations' values: on meta tensors the
    ops' fake kernels cannot say it, and none are held back (a W note says
    so; the outliers' fp16 slice is a few columns of each input).
    In meta mode the host copy is a real CPU tensor of zeros,
    whose .data cannot become the meta int8 weight (torch refuses a meta
    storage to a CPU tensor); the int8 weight is made a new Int8Params,
    which the caller uses as it would the one it moved.
  - a 4-bit weight (Params4bit, once quantized) packs two values a byte:
    its storage is classified "param4", which torchmem counts as twice its
    bytes in parameters (what PEFT's print_trainable_parameters() says).

Before 0.46 its kernels were ctypes calls into the native library with
the tensors' data pointers, which meta tensors do not have: the trace
ends as bitsandbytes is imported, saying so (what ran is reported).

Nothing here may raise into the program; of the hook it imports only
_common.
"""

import sys

from torchmem_hook import _common

_debug = _common.debug

_FUNCTIONAL = "bitsandbytes.functional"
_OPS = "bitsandbytes._ops"  # its ops with fake kernels (0.46 and later)
_MODULES = "bitsandbytes.nn.modules"

# What an M event calls the bytes of get_paged() (the report's breakdown
# item, as the built-in estimate names it).
PAGED = "paged_optimizer_states"


def packs_4bit(t):
    """t is a quantized bitsandbytes 4-bit weight (two values a byte)."""
    return type(t).__name__ == "Params4bit" and bool(getattr(t, "bnb_quantized", False))


def state_tensors(t):
    """The quantization constants of a bitsandbytes weight (a 4-bit one's
    absmax and code, double quantization's nested ones; an int8 one's row
    scales): they live as long as the weight, so they count with the
    weights, though not as parameters."""
    out = []
    qs = t.__dict__.get("quant_state") if type(t).__name__ == "Params4bit" else None
    while qs is not None:
        out.extend(x for x in (getattr(qs, "absmax", None), getattr(qs, "code", None)) if x is not None)
        qs = getattr(qs, "state2", None)
    if type(t).__name__ == "Int8Params" and getattr(t, "SCB", None) is not None:
        out.append(t.SCB)
    return out


def install(torch, T):
    """Patch bitsandbytes' paged memory when it is imported (or now)."""
    def on_functional(mod):
        if _OPS not in sys.modules:
            # (bitsandbytes imports its ops before its functional module)
            T.end("error", "bitsandbytes " + str(getattr(sys.modules.get("bitsandbytes"), "__version__", "")),
                  OLD_NOTE)
            return
        _patch_functional(torch, T, mod)
        if T.device == "meta":
            _patch_outliers(torch, T, mod)

    def on_modules(mod):
        if T.device == "meta":
            _patch_int8(torch, mod)

    _common.after_import({_FUNCTIONAL: on_functional, _MODULES: on_modules})


# Why a bitsandbytes before 0.46 cannot be traced, and what to do.
OLD_NOTE = ("this bitsandbytes calls its CUDA library with the tensors' data, which the trace's tensors "
            "do not have (its ops run on them from 0.46 on): trace with bitsandbytes 0.46 or later, or "
            "estimate without --trace (--peft qlora)")


def _patch_int8(torch, mod):
    cls = getattr(mod, "Int8Params", None)
    orig = getattr(cls, "_quantize", None)
    if orig is None:
        return

    def _quantize(self, device):
        if self.is_meta or getattr(self, "has_fp16_weights", True):
            return orig(self, device)
        # as bitsandbytes' own, on a new parameter
        import bitsandbytes.functional as F
        B = self.data.contiguous().to(device=device, dtype=torch.float16)
        CB, SCB, _ = F.int8_vectorwise_quant(B)
        out = cls(CB, requires_grad=self.requires_grad, has_fp16_weights=False, CB=CB, SCB=SCB)
        for k, v in self.__dict__.items():
            if k not in out.__dict__:
                out.__dict__[k] = v
        return out

    cls._quantize = _quantize


def _patch_functional(torch, T, F):
    orig = getattr(F, "get_paged", None)
    if orig is None:
        return
    where = "meta" if T.device == "meta" else "cpu"

    def get_paged(*shape, dtype=torch.float32, device=None):
        # (device=FIRST_CUDA_DEVICE in bitsandbytes: torch.device("cuda", 0))
        out = torch.zeros(*shape, dtype=dtype, device=where)
        try:
            T.outside(PAGED, out.numel() * out.element_size())
        except Exception:
            _debug()
        out.is_paged = True
        out.page_deviceid = getattr(device, "index", None) or 0
        return out

    def fill(A, value, device=None, prefetch=True):
        A.fill_(value)

    def prefetch_tensor(A, to_cpu=False):
        return None

    get_paged.__doc__ = orig.__doc__
    F.get_paged, F.fill, F.prefetch_tensor = get_paged, fill, prefetch_tensor
    if not hasattr(torch.ops.bitsandbytes, "optimizer_update_32bit"):
        # 0.46: the optimizers' updates are still native calls; they
        # update the states in place and allocate nothing (see _OPTIMIZER_UPDATES)
        for name in _OPTIMIZER_UPDATES:
            if hasattr(F, name):
                setattr(F, name, _nothing)


# bitsandbytes 0.46's optimizer updates, native calls that work in place on
# the tensors they are given: under the trace they do nothing (the memory
# is the GPU's, the values are not), as DeepSpeed's compiled optimizers do.
# From 0.47 they are ops with fake kernels.
_OPTIMIZER_UPDATES = ("optimizer_update_32bit", "optimizer_update_8bit", "optimizer_update_8bit_blockwise")


def _nothing(*a, **k):
    return None


# The W note for LLM.int8's outliers, once.
OUTLIER_NOTE = ("LLM.int8 holds back the outlier columns of each input (threshold %g), which depend on the "
                "values: none were assumed")


def _patch_outliers(torch, T, F):
    """LLM.int8 with a threshold on meta tensors: no outlier columns (see
    the docstring), the matmul the int8 one without them."""
    said = []

    def note(threshold):
        if not said:
            said.append(True)
            T.warn("int8outliers", "int8_vectorwise_quant", OUTLIER_NOTE % threshold)

    def wrap(orig, n_out):
        def quant(A, threshold=0.0, *a, **k):
            if threshold <= 0.0 or not A.is_meta:
                return orig(A, threshold, *a, **k)
            note(threshold)
            out = orig(A, 0.0, *a, **k)
            return tuple(out[:n_out - 1]) + (None,)
        quant.__doc__ = orig.__doc__
        return quant

    for name, n in (("int8_vectorwise_quant", 3), ("int8_double_quant", 5)):
        orig = getattr(F, name, None)
        if orig is not None:
            setattr(F, name, wrap(orig, n))

    ops = torch.ops.bitsandbytes
    mixed = getattr(ops, "int8_mixed_scaled_mm", None)
    if mixed is None or not hasattr(ops, "int8_scaled_mm"):
        return

    def int8_mixed_scaled_mm(A, CA, CB, SCA, SCB, outlier_cols=None, bias=None):
        if not A.is_meta:
            return mixed(A, CA, CB, SCA, SCB, outlier_cols, bias)
        return ops.int8_scaled_mm.default(CA, CB, SCA, SCB, bias=bias, dtype=A.dtype), None

    setattr(ops, "int8_mixed_scaled_mm", int8_mixed_scaled_mm)
