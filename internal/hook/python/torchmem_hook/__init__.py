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
    _common      versions, start_argv, debug, the import hook
"""

import sys

from torchmem_hook import _common

HOOK_VERSION = _common.HOOK_VERSION
PROTOCOL_VERSION = _common.PROTOCOL_VERSION

_armed = False
# The command line as the interpreter started (_common.start_argv, the
# same list).
start_argv = _common.start_argv


def _on_torch_imported(module):
    try:
        from torchmem_hook import _trace

        if _trace.armed():  # torchmem estimate --trace: no agent, the tracer
            _trace.start(module)
            return
        from torchmem_hook import _agent

        _agent.start(module)
    except Exception:
        _common.debug()


def arm():
    """Start watching for `import torch` (or hook at once if it is loaded)."""
    global _armed
    if _armed:
        return
    _armed = True
    start_argv[:] = list(getattr(sys, "orig_argv", None) or getattr(sys, "argv", []))
    torch = sys.modules.get("torch")
    if torch is not None and not hasattr(torch, "__version__"):
        return  # torch is being imported (this is its import): nothing is hooked
    _common.after_import({"torch": _on_torch_imported})
