# The three optimizer-step APIs the hook knows, chosen by FAKE_TORCH_STEP_API:
# "global" (torch >= 2.0 register_optimizer_step_post_hook), "code" (torch
# 1.12/1.13: _hook_for_profile calls _optimizer_step_code after each step),
# "class" (torch 1.10/1.11: only the per-class step wrapper).
import os

_api = os.environ.get("FAKE_TORCH_STEP_API", "global")
_hooks = []

if _api == "global":

    def register_optimizer_step_post_hook(fn):
        _hooks.append(fn)


class Optimizer(object):
    def __init__(self):
        if _api == "code":
            self._hook_for_profile()

    def _hook_for_profile(self):
        cls = self.__class__
        if getattr(cls.step, "hooked", False):
            return
        orig = cls.step

        def wrapper(*args, **kwargs):
            out = orig(*args, **kwargs)
            args[0]._optimizer_step_code()
            return out

        wrapper.hooked = True
        cls.step = wrapper

    if _api == "code":

        def _optimizer_step_code(self):
            pass

    def step(self):
        for h in _hooks:
            h(self, (), {})


class SGD(Optimizer):
    def step(self):
        Optimizer.step(self)
