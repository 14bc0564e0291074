"""Run a training script with zero_grad's default set to None, as torch
2.x has it: the script with the grads-to-none lever's change made, for
bench/trace/grads_lever.sh (on torch 1.13 zero_grad() zeroes in place).

usage: python set_to_none.py SCRIPT ARGS..."""
import runpy
import sys

import torch


def _none_default(zero_grad):
    def wrapped(self, set_to_none=True):
        return zero_grad(self, set_to_none=set_to_none)
    return wrapped


torch.optim.Optimizer.zero_grad = _none_default(torch.optim.Optimizer.zero_grad)
torch.nn.Module.zero_grad = _none_default(torch.nn.Module.zero_grad)
sys.argv = sys.argv[1:]
sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(sys.argv[0])))
runpy.run_path(sys.argv[0], run_name="__main__")
