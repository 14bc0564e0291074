"""torchmem estimate --trace, the amp lever: the program traced again as if
it ran its forward under CUDA autocast, the field's first advice for an
fp32 job, set by TORCHMEM_TRACE_AUTOCAST (bfloat16, or float16 for a GPU
without bf16: the memory is the same, GradScaler's is a few scalars).

What autocast changes cannot be replayed from an fp32 trace: which
activations come out in the lower dtype depends on the ops that made
them and on what fed them (a residual add of a bf16 and an fp32 tensor is
fp32), and the weights' copies are new allocations. So the program runs
once more with the region the AMP recipe puts in its training loop,

    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = criterion(model(x), y)
    loss.backward()

opened where the recipe opens it: before the first module's forward when
no module runs and no autocast region is on (the loss module inside it,
as in the recipe). It closes where the recipe's `with` block ends: when
the backward starts, when the optimizer steps, or, for a forward without
gradients (an evaluation, a frozen encoder under no_grad), when that
module's forward returns. The tracer's autocast emulation (_trace.py's
_Autocast) then casts as CUDA's does; closing the region clears its cache
of weight copies as torch's does. A gradient checkpoint's recompute in
the backward replays the autocast state it recorded, as it does on the GPU.
A program whose own region asks for float32 (nanoGPT's --dtype=float32
runs torch.amp.autocast("cuda", dtype=torch.float32), which casts nothing)
has its region's dtype set to the lever's instead, for as long as the
region lasts: the recipe with the dtype changed.
Only the meta device has the emulation: elsewhere nothing is forced.
Nothing here may raise into the program."""

import os

ENV_AUTOCAST = "TORCHMEM_TRACE_AUTOCAST"

_DTYPES = ("bfloat16", "float16")


class Forced(object):
    """The forced autocast region; a no-op when none is asked for."""

    def __init__(self, torch, T):
        self.torch = torch
        self.T = T
        name = os.environ.get(ENV_AUTOCAST, "")
        self.dtype = getattr(torch, name) if name in _DTYPES and T.device == "meta" else None
        self.region = None
        self.retyped = False  # the program's own float32 region given the dtype

    def header(self):
        """The trace header's field saying the run was forced, or None."""
        if self.dtype is None:
            return None
        return "autocast=" + str(self.dtype).replace("torch.", "")

    def module_enter(self):
        """Before a module's forward: open the region for an outermost
        forward outside the backward, where the program has no autocast of
        its own on. Inside an optimizer step too: a closure's forward
        (Lightning's automatic optimization, LBFGS) is the iteration's."""
        T, torch = self.T, self.torch
        if self.dtype is None or self.region is not None or T.modules or T.phase == "backward":
            return
        try:
            if torch.is_autocast_enabled():
                if _gpu_dtype(torch) == torch.float32:
                    _set_gpu_dtype(torch, self.dtype)
                    self.retyped = True
                return
            r = torch.autocast("cuda", dtype=self.dtype)
            r.__enter__()
            self.region = r
        except Exception as err:
            T.warn("autocast", "torch.autocast", "the amp lever's autocast region could not be opened: %s" % err)
            self.dtype = None

    def module_leave(self):
        """After a module's forward: a forward without gradients has no
        backward to wait for; its region ends with it."""
        if self.region is not None and not self.T.modules and not self.torch.is_grad_enabled():
            self.close()

    def close(self):
        """End the region (the backward or the step begins)."""
        torch = self.torch
        if self.retyped:
            # the program's own region (still on, if its with block holds
            # the backward) is float32 again; ended, it restored its own
            self.retyped = False
            try:
                if torch.is_autocast_enabled() and _gpu_dtype(torch) == self.dtype:
                    _set_gpu_dtype(torch, torch.float32)
            except Exception:
                pass
        r, self.region = self.region, None
        if r is None:
            return
        try:
            r.__exit__(None, None, None)
        except Exception as err:
            self.T.warn("autocast", "torch.autocast", "the amp lever's autocast region could not be closed: %s" % err)


def _gpu_dtype(torch):
    """CUDA autocast's dtype (get_autocast_dtype("cuda") from torch 2.4,
    whose get_autocast_gpu_dtype warns)."""
    get = getattr(torch, "get_autocast_dtype", None)
    return get("cuda") if get is not None else torch.get_autocast_gpu_dtype()


def _set_gpu_dtype(torch, dtype):
    set_ = getattr(torch, "set_autocast_dtype", None)
    if set_ is not None:
        set_("cuda", dtype)
    else:
        torch.set_autocast_gpu_dtype(dtype)
