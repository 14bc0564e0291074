"""Optimizer step numbers without code changes: torch >= 2.0's global
step post-hook, torch 1.12/1.13's _optimizer_step_code, or on 1.10/1.11 a
wrapper of each optimizer class's step. Each step is reported to the
agent that `current` returns at that moment (the one of this process).

At that boundary take_peaks reads the allocator's peaks of the step just
ended and resets them (what users do by hand with
torch.cuda.reset_peak_memory_stats() and max_memory_allocated()), so each
step's peak is measured, not sampled."""

import os

from torchmem_hook import _common

hook_kind = "none"  # "global", "wrapped" or "none", reported in hello


def _on_step(current, optimizer):
    try:
        a = current()
        if a is not None:
            a.on_step(optimizer)
    except Exception:
        _common.debug()


def peaks_enabled():
    """Step peaks are on unless TORCHMEM_STEP_PEAKS=0 (torchmem run
    --no-step-peaks): the reset also resets what the program itself reads
    from torch.cuda.max_memory_allocated()."""
    return os.environ.get("TORCHMEM_STEP_PEAKS", "1") != "0"


def take_peaks(torch, devices):
    """The allocated and reserved peaks since the last reset on each of
    devices (the current device when empty), each reset after reading:
    [(device, allocated, reserved)]. Empty while CUDA is not initialised
    (never initialises it). Uses torch._C's two calls where present: the
    public max_memory_* each build the whole memory_stats() dict."""
    cuda = torch.cuda
    if not cuda.is_initialized():
        return []
    if not devices:
        devices = [cuda.current_device()]
    stats = getattr(torch._C, "_cuda_memoryStats", None)
    reset = getattr(torch._C, "_cuda_resetPeakMemoryStats", None)
    out = []
    for d in devices:
        if stats is not None and reset is not None:
            s = stats(d)
            a, r = s["allocated_bytes"]["all"]["peak"], s["reserved_bytes"]["all"]["peak"]
            reset(d)
        else:
            a, r = cuda.max_memory_allocated(d), cuda.max_memory_reserved(d)
            cuda.reset_peak_memory_stats(d)
        out.append((d, int(a), int(r)))
    return out


def install_step_hook(torch, current):
    """Report every optimizer step to current(), the process's agent."""
    global hook_kind
    import torch.optim.optimizer as optmod

    reg = getattr(optmod, "register_optimizer_step_post_hook", None)
    if reg is not None:  # torch >= 2.0: one global hook for every optimizer
        reg(lambda opt, args, kwargs: _on_step(current, opt))
        hook_kind = "global"
        return
    opt = optmod.Optimizer
    # torch 1.x: every optimizer's step is wrapped by _hook_for_profile,
    # which calls obj._optimizer_step_code() after each step.
    orig = getattr(opt, "_optimizer_step_code", None)
    if orig is not None:
        def _optimizer_step_code(self, *a, **k):
            try:
                return orig(self, *a, **k)
            finally:
                _on_step(current, self)

        opt._optimizer_step_code = _optimizer_step_code
        hook_kind = "wrapped"
        return
    # torch 1.10/1.11: wrap each optimizer class's step once, the way
    # _hook_for_profile does, from Optimizer.__init__.
    orig_init = opt.__init__

    def __init__(self, *a, **k):
        orig_init(self, *a, **k)
        try:
            _wrap_class_step(type(self), current)
        except Exception:
            _common.debug()

    opt.__init__ = __init__
    hook_kind = "wrapped"


_step_depth = None  # threading.local: nested wrapped steps count once


def _wrap_class_step(cls, current):
    """Wrap the step that cls resolves to, once per defining class."""
    global _step_depth
    import threading

    if _step_depth is None:
        _step_depth = threading.local()
    owner = next((k for k in cls.__mro__ if "step" in k.__dict__), None)
    if owner is None:
        return
    step = owner.__dict__["step"]
    if getattr(step, "_torchmem_wrapped", False) or not callable(step):
        return

    def wrapped(self, *a, **k):
        depth = getattr(_step_depth, "n", 0)
        _step_depth.n = depth + 1
        try:
            return step(self, *a, **k)
        finally:
            _step_depth.n = depth
            if depth == 0:
                _on_step(current, self)

    wrapped._torchmem_wrapped = True
    wrapped.__wrapped__ = step
    for attr in ("__name__", "__qualname__", "__doc__", "__module__"):
        try:
            setattr(wrapped, attr, getattr(step, attr))
        except (AttributeError, TypeError):
            pass
    owner.step = wrapped


