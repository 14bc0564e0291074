"""torchmem estimate --trace --real: run the program on its real GPU and
keep what PyTorch's caching allocator did: the exact answer for the job,
and the ground truth the meta trace (_trace.py) is checked against.

_trace.start() hands over here when TORCHMEM_TRACE_DEVICE is "real".
Nothing is redirected. When torch is imported:

  - torch.cuda.memory._record_memory_history is armed through
    torch.cuda._lazy_call, as the run hook's is (_cuda.py): it starts inside
    torch's own CUDA initialisation, before the first allocation, and never
    causes it (a program may still set CUDA_VISIBLE_DEVICES or fork first).
    It records every alloc, free and segment event with its Python stack
    (stacks="python": C++ unwinding costs more and the report wants the
    program's lines), at most max_entries of them (a ring: the oldest go
    first; sized from TORCHMEM_TRACE_MAX_BYTES);
  - module forward hooks, autograd.backward and the global optimizer step
    hooks mark the phases with the time (epoch microseconds, the clock of
    the snapshot's time_us), for the phase of the peak;
  - after TORCHMEM_TRACE_STEPS optimizer steps, or when the program ends
    or fails before that, torch.cuda.memory._snapshot() is written to
    real.pickle and memory_stats(), the device's properties and the phase
    marks to real.json, both next to the trace file, whose E line says
    why it ended; after the steps the process exits 0.

The trace file holds the header (device=real), a stack for the line an
error came from, and the E line. torch >= 2.0 (global optimizer step
hooks, the snapshot's device_traces) and a CUDA GPU are needed: without
them the E line's reason is "unsupported", its message says what is
missing, and the process exits 3 before the program runs.
Nothing here may raise into the program.
"""

import json
import os
import sys
import time

from torchmem_hook import _common

_clean = _common.one_line
_debug = _common.debug

SNAPSHOT_FILE = "real.pickle"
STATS_FILE = "real.json"

# What the history keeps: about this many bytes of snapshot per entry
# (a pickled entry with a few Python frames), so the file stays under
# the size cap; never fewer entries than a small model's step makes, nor
# more than the process can hold in host memory without notice.
ENTRY_BYTES = 1024
MIN_ENTRIES = 10000
MAX_ENTRIES = 1000000
MAX_MARKS = 10000

# The exit status when real mode cannot run at all.
EXIT_UNSUPPORTED = 3

_state = None


def _first_line(s):
    return str(s).split("\n")[0][:300]


def max_entries(cap):
    """The history's ring size for a file size cap (0: no cap)."""
    if not cap or cap <= 0:
        return MAX_ENTRIES
    return max(MIN_ENTRIES, min(MAX_ENTRIES, cap // ENTRY_BYTES))


def unsupported_reason(torch):
    """Why this process cannot run --real, or None. No GPU first: that is
    the answer on a host without one, whatever its torch."""
    try:
        ok = _available(torch)
    except Exception as err:
        return "--real needs a CUDA GPU: torch.cuda.is_available() failed: %s" % _first_line(err)
    if not ok:
        return "--real needs a CUDA GPU: torch.cuda.is_available() is False on this host"
    if _common.torch_version(torch) < (2, 0):
        return ("--real needs torch >= 2.0 (the allocator's trace and the global "
                "optimizer step hooks): this is torch %s" % torch.__version__)
    return None


def _available(torch):
    """torch.cuda.is_available() through NVML where torch can (its
    PYTORCH_NVML_BASED_CUDA_CHECK path), so asking does not start the CUDA
    runtime before the program does (a fork after that cannot use CUDA)."""
    key = "PYTORCH_NVML_BASED_CUDA_CHECK"
    prev = os.environ.get(key)
    os.environ[key] = "1"
    try:
        return torch.cuda.is_available()
    finally:
        if prev is None:
            del os.environ[key]
        else:
            os.environ[key] = prev


def record_history(torch, entries):
    """Start the allocator's history; returns the API used."""
    mem = torch.cuda.memory
    try:
        # torch >= 2.1
        mem._record_memory_history(enabled="all", context="all", stacks="python", max_entries=entries)
        return "2.1"
    except TypeError:
        # torch 2.0: the boolean form (2.1+ keeps it as the legacy API)
        mem._record_memory_history(True, trace_alloc_max_entries=entries, trace_alloc_record_context=True)
        return "2.0"


class _Real(object):
    def __init__(self, torch, writer, trace_path, steps, entries):
        self.torch = torch
        self.w = writer
        self.dir = os.path.dirname(os.path.abspath(trace_path))
        self.pid = os.getpid()
        self.steps = steps
        self.entries = entries
        self.api = ""
        self.history_error = ""
        self.done = 0
        self.iteration = _common.Steps()  # which optimizer steps count
        self.phase = "setup"
        self.marks = []
        self.ended = False
        self.skip = (os.path.dirname(os.path.abspath(torch.__file__)),
                     os.path.dirname(os.path.abspath(__file__)))
        self.mark("setup")

    def mark(self, phase):
        self.phase = phase
        if len(self.marks) < MAX_MARKS:
            self.marks.append({"phase": phase, "step": self.done + 1, "time_us": int(time.time() * 1e6)})

    def finish(self, reason, op, msg, where=None):
        """Write the snapshot, the stats and the E line, once."""
        if self.ended or os.getpid() != self.pid:
            return
        self.ended = True
        info = {"torch": str(self.torch.__version__), "steps": self.done, "end": reason,
                "history_api": self.api, "max_entries": self.entries, "phases": self.marks,
                "snapshot": "", "snapshot_note": ""}
        torch = self.torch
        if not _cuda_initialized(torch):
            info["snapshot_note"] = "the program never initialised CUDA: nothing ran on the GPU"
            self.write_info(info)
            self.write_end(reason, op, msg, where)
            return
        try:
            torch.cuda.synchronize()
        except Exception:
            pass
        try:
            p = torch.cuda.get_device_properties(torch.cuda.current_device())
            info["device"] = {"name": p.name, "total_memory": int(p.total_memory),
                              "major": int(p.major), "minor": int(p.minor)}
        except Exception as err:
            info["device_note"] = _first_line(err)
        try:
            info["memory_stats"] = dict((k, v) for k, v in torch.cuda.memory_stats().items()
                                        if isinstance(v, (int, float)))
        except Exception as err:
            info["memory_stats_note"] = _first_line(err)
        info["snapshot"], info["snapshot_note"] = self.write_snapshot()
        if self.history_error and not info["snapshot_note"]:
            info["snapshot_note"] = "the allocator's history was not recorded: " + self.history_error
        self.write_info(info)
        self.write_end(reason, op, msg, where)

    def write_info(self, info):
        try:
            with open(os.path.join(self.dir, STATS_FILE), "w") as f:
                json.dump(info, f)
        except Exception:
            _debug()

    def write_end(self, reason, op, msg, where):
        sid = "0"
        if where:
            sid = "1"
            self.w.line(["S", sid, _clean(where)])
        self.w.line(["E", reason, _clean(op), sid, _clean(msg)[:500]])
        self.w.close()

    def write_snapshot(self):
        import pickle

        path = os.path.join(self.dir, SNAPSHOT_FILE)
        try:
            snap = self.torch.cuda.memory._snapshot()
            with open(path, "wb") as f:
                pickle.dump(snap, f)
        except Exception as err:
            return "", "the snapshot could not be taken: %s" % _first_line(err)
        cap = self.w.limit
        size = os.path.getsize(path)
        if cap and size > cap:
            os.remove(path)
            return "", "the snapshot (%d bytes) is over --trace-max-size: measured peaks only" % size
        return SNAPSHOT_FILE, ""

    def step_done(self, opt):
        counted = self.iteration.step(opt)
        self.done += counted
        self.mark("after_step")
        if counted and self.done >= self.steps:
            self.finish("steps", "", "%d optimizer steps run on the GPU" % self.done)
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(0)


def start(torch, writer, trace_path, steps, refused=None):
    """Run the program on its GPU, recording the allocator (torch has just
    been imported); the files go next to trace_path. Returns the state, or
    exits when --real cannot run (refused: why not, found by the caller)."""
    global _state
    writer.line(["torchmem-trace", "1", "device=real", "torch=" + _clean(torch.__version__),
                 "python=%d.%d.%d" % sys.version_info[:3], "steps=%d" % steps])
    reason = refused or unsupported_reason(torch)
    if reason is not None:
        writer.line(["E", "unsupported", "", "0", _clean(reason)])
        writer.close()  # torchmem prints the reason
        os._exit(EXIT_UNSUPPORTED)
    R = _Real(torch, writer, trace_path, steps, max_entries(writer.limit))
    _state = R
    _arm_history(torch, R)
    _install_phases(torch, R)
    _install_exit(R)
    return R


def _cuda_initialized(torch):
    f = getattr(torch.cuda, "is_initialized", None)
    try:
        return f is None or bool(f())
    except Exception:
        return False


def _arm_history(torch, R):
    """Record the allocator's history from CUDA's initialisation on."""

    def on_init():
        try:
            R.api = record_history(torch, R.entries)
        except Exception as err:  # never surface as DeferredCudaCallError
            R.history_error = _first_line(err)

    lazy = getattr(torch.cuda, "_lazy_call", None)
    if lazy is None or _cuda_initialized(torch):
        on_init()
    else:
        lazy(on_init)


def _install_phases(torch, R):
    import torch.nn.modules.module as mm
    import torch.autograd as ag
    import torch.optim.optimizer as om

    def pre(module, inputs):
        R.iteration.pass_ran()
        if R.phase not in ("forward", "backward"):
            R.mark("forward")

    mm.register_module_forward_pre_hook(pre)

    orig_backward = ag.backward
    in_backward = [0]

    def backward(*a, **k):
        if in_backward[0]:
            # reentrant checkpointing's own backward of a recomputed
            # segment, inside the backward pass: still the same phase
            # (as the meta tracer's _install_phases does)
            return orig_backward(*a, **k)
        R.mark("backward")
        R.iteration.pass_ran()
        in_backward[0] += 1
        try:
            return orig_backward(*a, **k)
        finally:
            in_backward[0] -= 1
            R.mark("after_backward")

    ag.backward = backward
    _common.count_grad_passes(ag, R.iteration)

    depth = [0]

    def step_pre(opt, a, k):
        depth[0] += 1
        if depth[0] == 1:
            R.mark("optimizer")

    def step_post(opt, a, k):
        depth[0] -= 1
        if depth[0] == 0:
            R.step_done(opt)

    om.register_optimizer_step_pre_hook(step_pre)
    om.register_optimizer_step_post_hook(step_post)


def _install_exit(R):
    import atexit

    prev = sys.excepthook

    def hook(tp, value, tb):
        where = _common.program_frame(tb, R.skip)  # the program's innermost line
        try:
            R.finish("error", "", "%s: %s" % (tp.__name__, _first_line(value)), where)
        except Exception:
            _debug()
        prev(tp, value, tb)

    def at_exit():
        R.finish("exit", "", "the program ended after %d optimizer steps" % R.done)

    sys.excepthook = hook
    atexit.register(at_exit)
