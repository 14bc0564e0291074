"""What every module of the hook shares, and nothing else: the versions,
the command line as the interpreter started, the debug report, and the
import hook (after_import). It
imports no other module of the hook, so any of them can import it."""

import os
import sys

HOOK_VERSION = 1
PROTOCOL_VERSION = 1

# The oldest Python the hook arms under (sitecustomize checks it too):
# CentOS 7's python3 and RHEL 8's python3.6 are 3.6.
MIN_PYTHON = (3, 6)

# The command line as the interpreter started: a spawned multiprocessing
# child rewrites sys.argv to its parent's before it imports torch. Filled
# in place by torchmem_hook.arm().
start_argv = []


def debug():
    """With TORCHMEM_HOOK_DEBUG set, write the exception being handled to
    stderr; otherwise nothing (the hook never prints)."""
    if os.environ.get("TORCHMEM_HOOK_DEBUG"):
        import traceback

        sys.stderr.write("torchmem hook: " + traceback.format_exc())


def torch_version(torch):
    """(major, minor) of torch.__version__: "2.7.0a0+git" and "2.14.1+debian"
    read as (2, 7) and (2, 14); what does not parse as (0, 0)."""
    parts = []
    for p in str(getattr(torch, "__version__", "")).split("+")[0].split(".")[:2]:
        digits = ""
        for c in p:
            if not c.isdigit():
                break
            digits += c
        parts.append(int(digits or 0))
    while len(parts) < 2:
        parts.append(0)
    return tuple(parts)


def one_line(s):
    """s as one field of a tab-separated line: tabs and line breaks become
    spaces (the tracer's trace and --real's end line)."""
    return str(s).replace("\t", " ").replace("\n", " ").replace("\r", " ")


def degraded():
    """What this interpreter lacks that the hook would use, one sentence
    each (empty from Python 3.8 on). torchmem doctor prints these, and the
    agent sends them as notices. Each missing API is looked up, not
    inferred from the version, so a backport counts as present."""
    out = []
    if not hasattr(os, "register_at_fork"):  # Python 3.7
        out.append("no os.register_at_fork (Python 3.7+): a forked child takes over the "
                   "connection at its first hook call, not at the fork; a forked child that "
                   "never imports or uses torch is not reported")
    import threading

    if not hasattr(threading, "excepthook"):  # Python 3.8
        out.append("no threading.excepthook (Python 3.8+): uncaught exceptions in threads "
                   "other than the main thread are not reported")
    return out


# Python's own library: an error raised in it (urllib's URLError for a
# download the program asked for, json's decoder) is told at the line that
# called it, which is what the user can change. Packages installed below
# it (a virtual environment's site-packages) are not the standard library.
_STDLIB = os.path.dirname(os.path.abspath(os.__file__)) + os.sep


def _in_stdlib(fn):
    return fn.startswith(_STDLIB) and "-packages" + os.sep not in fn


def program_frame(tb, skip):
    """The innermost frame of a traceback outside the paths that start with
    skip (torch's and the hook's own) and outside the standard library:
    "file:line:function"; the innermost outside skip when every such frame
    is the standard library's; None when none is."""
    where = inner = None
    while tb is not None:
        fn = tb.tb_frame.f_code.co_filename
        if not fn.startswith(skip):
            inner = "%s:%d:%s" % (fn, tb.tb_lineno, tb.tb_frame.f_code.co_name)
            if not _in_stdlib(fn):
                where = inner
        tb = tb.tb_next
    return where or inner


class Steps(object):
    """Which optimizer.step() calls count toward --steps: one per training
    iteration, counted where the iteration ends.

    A step is part of an iteration only when a forward or backward pass ran
    since the last step: a second step() on the same gradients (two
    optimizers over one backward, or an old torchvision reference script's
    scaler.step(optimizer) followed by optimizer.step()) is the same
    iteration. Counting it would stop a 2-step trace after one iteration,
    before the second forward and backward, whose peak (the optimizer's
    states already made) is usually the job's.

    Optimizers that each step after their own backward (a GAN's
    discriminator, then its generator) are one iteration too: it ends with
    the last of them. Which one that is is learned when an optimizer steps
    again (the second iteration begins); until then the first step counts.
    A 2-step trace of a GAN so runs both of its iterations to the
    generator's step, where it had ended at the second iteration's
    discriminator step, before the generator's states were ever used again
    (the peak 11 % under). An iteration left open when the next begins (an
    optimizer skipped that time) counts then."""

    def __init__(self):
        self.ran = True  # the first step counts
        self.cur = []  # id() of the optimizers stepped in this iteration, in order
        self.cycle = None  # those of the first whole iteration, once known
        self.open = False  # this iteration has not been counted yet

    def pass_ran(self):
        self.ran = True

    def step(self, opt=None):
        """The iterations that this step() ends: 0, 1, or 2 (the one left
        open before it, and its own)."""
        ran, self.ran = self.ran, False
        if not ran:
            return 0
        key = id(opt)
        late = 0
        if key in self.cur:  # it steps again: a new iteration begins
            if self.cycle is None:
                self.cycle = list(self.cur)
            late = 1 if self.open else 0
            self.cur = []
        if not self.cur:
            self.open = True
        self.cur.append(key)
        ends = self.open and (self.cycle is None or key == self.cycle[-1])
        if ends:
            self.open = False
        return late + (1 if ends else 0)


def count_grad_passes(ag, steps):
    """torch.autograd.grad marks a pass for steps (Steps): torch.func and
    hand-written loops compute gradients with it, not .backward()."""
    orig = getattr(ag, "grad", None)
    if orig is None:  # a stand-in torch without it (the --real tests)
        return

    def grad(*a, **k):
        steps.pass_ran()
        return orig(*a, **k)

    ag.grad = grad


def flat(x, out=None):
    """The leaves of nested lists, tuples and dicts' values (an op's
    arguments), appended to out."""
    out = [] if out is None else out
    if isinstance(x, (list, tuple)):
        for y in x:
            flat(y, out)
    elif isinstance(x, dict):
        for y in x.values():
            flat(y, out)
    else:
        out.append(x)
    return out


def local_shard(t):
    """A DTensor's local shard (rank 0's: what is on the device), any other
    tensor itself."""
    return t._local_tensor if type(t).__name__ == "DTensor" else t


def plain_tensors(t, depth=4):
    """The tensors with storage a wrapper subclass holds (torchao's float8
    weight around its shard, a DTensor's local), by the protocol
    torch.compile uses (__tensor_flatten__); t itself when it wraps none."""
    t = local_shard(t)
    flatten = getattr(t, "__tensor_flatten__", None)
    if flatten is None or depth == 0:
        return [t]
    try:
        inner = [x for x in (getattr(t, n, None) for n in flatten()[0]) if x is not None]
    except Exception:
        return [t]
    out = []
    for x in inner:
        out.extend(plain_tensors(x, depth - 1))
    return out or [t]


class _AfterLoader(object):
    """Wraps a module's real loader to call its hook once it has run."""

    def __init__(self, loader, finder, name):
        self._loader, self._finder, self._name = loader, finder, name

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        try:
            self._loader.exec_module(module)
        finally:
            # put the real loader back so nothing downstream sees this one
            spec = getattr(module, "__spec__", None)
            if spec is not None and spec.loader is self:
                spec.loader = self._loader
            if getattr(module, "__loader__", None) is self:
                module.__loader__ = self._loader
        hook = self._finder.fired(self._name)
        if hook is not None:
            try:
                hook(module)
            except Exception:
                debug()

    def __getattr__(self, name):
        return getattr(self._loader, name)


class _AfterFinder(object):
    """Meta-path finder that notices the imports of the modules it has
    hooks for; it finds nothing itself, and leaves sys.meta_path once each
    hook has run."""

    def __init__(self, hooks, pending=None):
        self.hooks = hooks
        self.pending = pending or {}  # name -> hook, of modules half made when armed

    def find_spec(self, name, path=None, target=None):
        if self.pending:
            self._made()
        if name not in self.hooks:
            return None
        try:
            for finder in sys.meta_path:
                find = getattr(finder, "find_spec", None)
                if finder is self or find is None:
                    continue
                spec = find(name, path, target)
                if spec is not None:
                    break
            else:
                return None
            if spec.loader is None or not hasattr(spec.loader, "exec_module"):
                return None
            spec.loader = _AfterLoader(spec.loader, self, name)
            return spec
        except Exception:
            return None  # let the normal import machinery do (and report) it

    def _made(self):
        """Run the hooks of the pending modules whose import has ended."""
        for name in list(self.pending):
            mod = sys.modules.get(name)
            if mod is None or not _initializing(mod):
                hook = self.pending.pop(name)
                if mod is not None:
                    try:
                        hook(mod)
                    except Exception:
                        debug()
        self._maybe_leave()

    def fired(self, name):
        """The hook for name, once (None after): the module has loaded."""
        hook = self.hooks.pop(name, None)
        self._maybe_leave()
        return hook

    def _maybe_leave(self):
        if not self.hooks and not self.pending:
            try:
                sys.meta_path.remove(self)
            except ValueError:
                pass

    def invalidate_caches(self):
        pass


def after_import(hooks):
    """Call hooks[name](module) once module name has been imported (now,
    for one that already is), each once. A library patched where it is
    defined (a class's method) is patched for every importer, whenever it
    imports."""
    hooks = dict(hooks)
    pending = {}
    for name in list(hooks):
        mod = sys.modules.get(name)
        if mod is not None and _initializing(mod):
            # still being imported (it imported torch, which armed these
            # hooks): half made and past the finder; hooked once it is
            # made, at the next import the finder sees
            pending[name] = hooks.pop(name)
        elif mod is not None:
            try:
                hooks.pop(name)(mod)
            except Exception:
                debug()
    if hooks or pending:
        sys.meta_path.insert(0, _AfterFinder(hooks, pending))


def _initializing(mod):
    return bool(getattr(getattr(mod, "__spec__", None), "_initializing", False))
