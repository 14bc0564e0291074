"""What autograd saves for a backward (estimate --trace): T.saved holds
the storages a forward's graph keeps while they live, until a backward
unpacks them (used). A graph no backward used is
told by its saved storages never unpacked, "U id" (estimate's
unused_graph): freed outside autograd's engine (T.engine: backward and
autograd.grad), said before their "F"; or still alive when the trace
ends though an engine run began after they were saved (a metric or a
loss kept with its graph across steps). Evaluation or
sampling without torch.no_grad(), a forward under grad mode whose output
no backward reached, is the usual cause.

The tracer's saved-tensor hooks (torch.autograd.graph.saved_tensors_hooks;
on torch >= 2.0, see install) sit at the bottom of the stack: the
program's own (a checkpoint, save_on_cpu) nest above them and take their
tensors. torch.func's
transforms refuse to run while any such hooks exist ("don't yet support
saved tensor hooks"): around them the tracer's are taken off and put back.
Nothing here may raise into the program.
"""

import contextlib

from torchmem_hook import _common


def install(torch, T, skey):
    """skey: a tensor's storage key (_trace._skey), as T.live is keyed.
    torch >= 2.0 only: 1.13's Python dispatch hands a mode autograd's
    saved wrapped numbers (the scalar of `q * 0.125`) as Python numbers,
    and the detach autograd makes of one coming back from a hook fails
    there; on 1.13 no graph is told unused."""
    if _common.torch_version(torch) < (2, 0):
        return
    graph = getattr(torch.autograd, "graph", None)
    C = getattr(torch._C, "_autograd", None)
    push = getattr(C, "_push_saved_tensors_default_hooks", None)
    pop = getattr(C, "_pop_saved_tensors_default_hooks", None)
    if graph is None or push is None or pop is None:
        return
    saved = T.saved

    def pack(t):
        try:
            e = T.live.get(skey(t))
            if e is not None and e[0] > 0 and e[0] not in saved:  # 0: a host placeholder
                saved[e[0]] = T.engine_runs
        except Exception:  # never into the program's forward
            _common.debug()
        # not t itself: a saved output would then hold its own grad_fn, a
        # reference cycle only the garbage collector frees (the graph of
        # a ReLU's output outlived its forward); detach() shares the
        # storage and the version counter, without the grad_fn
        return t.detach()

    def unpack(t):
        # the engine uses it: its graph is not unused (what Python holds
        # of it may outlive the backward)
        try:
            e = T.live.get(skey(t))
            if e is not None:
                saved.pop(e[0], None)
        except Exception:
            _common.debug()
        return t

    try:
        push(pack, unpack)
    except Exception:
        _common.debug()
        return
    _around_disable(graph, C, push, pop, pack, unpack)
    _engine_grad(torch.autograd, T)


def _engine_grad(ag, T):
    """torch.autograd.grad runs the engine as backward does (the backward
    wrapper of _trace.py counts its own)."""
    orig = getattr(ag, "grad", None)
    if orig is None:
        return

    def grad(*a, **k):
        T.engine += 1
        T.engine_runs += 1
        try:
            return orig(*a, **k)
        finally:
            T.engine -= 1

    ag.grad = grad


def _around_disable(graph, C, push, pop, pack, unpack):
    """torch.autograd.graph.disable_saved_tensors_hooks (torch.func's
    grad, vjp, jacrev; torch >= 2.0) raises when hooks are on the stack:
    the tracer's are taken off for its extent when they are the only ones,
    which is when the program's own call would succeed untraced. The
    program's own hooks are counted as saved_tensors_hooks pushes and pops
    them (through torch._C._autograd, looked up at each call)."""
    orig = getattr(graph, "disable_saved_tensors_hooks", None)
    if orig is None:
        return
    above = [0]  # the program's hooks on the stack above the tracer's

    def counted_push(p, u):
        push(p, u)
        above[0] += 1

    def counted_pop():
        pop()
        above[0] = max(0, above[0] - 1)

    C._push_saved_tensors_default_hooks = counted_push
    C._pop_saved_tensors_default_hooks = counted_pop

    @contextlib.contextmanager
    def disable_saved_tensors_hooks(error_message):
        ours = above[0] == 0
        if ours:
            pop()
        try:
            with orig(error_message):
                yield
        finally:
            if ours:
                push(pack, unpack)

    disable_saved_tensors_hooks.__doc__ = orig.__doc__
    graph.disable_saved_tensors_hooks = disable_saved_tensors_hooks


def at_end(T):
    """The trace ends: a saved storage still alive that an engine run begun
    after it left alone belongs to a graph kept unused."""
    try:
        for i, runs in list(T.saved.items()):
            if runs < T.engine_runs and not T.engine:
                T.emit(["U", str(i)])
    except Exception:
        _common.debug()
