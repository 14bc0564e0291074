"""Optimizer step numbers without code changes: torch >= 2.0's global
step post-hook, torch 1.12/1.13's _optimizer_step_code, or on 1.10/1.11 a
wrapper of each optimizer class's step. Each step is reported to the
agent that `current` returns at that moment (the one of this process)."""

from torchmem_hook import _common

hook_kind = "none"  # "global", "wrapped" or "none", reported in hello


def _on_step(current, optimizer):
    try:
        a = current()
        if a is not None:
            a.on_step(optimizer)
    except Exception:
        _common.debug()


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


