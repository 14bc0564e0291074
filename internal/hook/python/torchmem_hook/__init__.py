"""torchmem's in-process hook.

Armed by torchmem's sitecustomize when TORCHMEM_HOOK_SOCKET is set. It
waits for the program to import torch (a meta-path finder wraps torch's
loader; nothing is imported eagerly), then connects to the supervisor's
Unix socket and reports: hello, allocator stats every
TORCHMEM_HOOK_INTERVAL seconds and after optimizer steps, CUDA OOMs (from
the allocator's OOM observer), uncaught exceptions. It answers the commands
cleanup, snapshot and reset_peaks.

Rules: never initialise CUDA (allocator calls only after
torch.cuda.is_initialized()), never raise into the program, never print,
go quiet when the socket goes away. Python >= 3.6 (what 3.6/3.7 lack:
_common.degraded()), torch >= 1.10.

Modules, each importing only those below it (no cycle):

    _agent       the connection: owns this process's Agent, starts it,
                 installs the hooks below and hands them `current`, the
                 getter of the agent (replaced after a fork)
    _cuda        the CUDA-init hook, the OOM observer, commands
    _torchstats  what is read from torch; exception and exit hooks
    _steps       the optimizer step hook
    _common      versions, start_argv, debug
"""

import sys

from torchmem_hook import _common

HOOK_VERSION = _common.HOOK_VERSION
PROTOCOL_VERSION = _common.PROTOCOL_VERSION

_armed = False
# The command line as the interpreter started (_common.start_argv, the
# same list).
start_argv = _common.start_argv


class _TorchLoader(object):
    """Wraps torch's real loader to run the hook right after torch loads."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        try:
            self._loader.exec_module(module)
        finally:
            # Put the real loader back so nothing downstream sees ours.
            spec = getattr(module, "__spec__", None)
            if spec is not None and spec.loader is self:
                spec.loader = self._loader
            if getattr(module, "__loader__", None) is self:
                module.__loader__ = self._loader
        _on_torch_imported(module)

    def __getattr__(self, name):
        return getattr(self._loader, name)


class _TorchFinder(object):
    """Meta-path finder that only notices `import torch`; it finds nothing itself."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        try:
            for finder in sys.meta_path:
                if finder is self:
                    continue
                find = getattr(finder, "find_spec", None)
                if find is None:
                    continue
                spec = find(name, path, target)
                if spec is not None:
                    break
            else:
                return None
            if spec.loader is None or not hasattr(spec.loader, "exec_module"):
                return None
            spec.loader = _TorchLoader(spec.loader)
            return spec
        except Exception:
            return None  # let the normal import machinery do (and report) it

    def invalidate_caches(self):
        pass


def _on_torch_imported(module):
    _remove_finder()
    try:
        from torchmem_hook import _trace

        if _trace.armed():  # torchmem estimate --trace: no agent, the tracer
            _trace.start(module)
            return
        from torchmem_hook import _agent

        _agent.start(module)
    except Exception:
        _common.debug()


def _remove_finder():
    for f in list(sys.meta_path):
        if isinstance(f, _TorchFinder):
            try:
                sys.meta_path.remove(f)
            except ValueError:
                pass


def arm():
    """Start watching for `import torch` (or hook at once if it is loaded)."""
    global _armed
    if _armed:
        return
    _armed = True
    start_argv[:] = list(getattr(sys, "orig_argv", None) or getattr(sys, "argv", []))
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "__version__"):
        _on_torch_imported(torch)
        return
    sys.meta_path.insert(0, _TorchFinder())
