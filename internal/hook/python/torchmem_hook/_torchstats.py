"""What the hook reads from and does to torch. Every CUDA call is behind
torch.cuda.is_initialized(): the hook never initialises CUDA itself. The
exception, exit and DataLoader-worker hooks reach the process's agent
through `current`, which _agent hands them."""

import os
import sys
import time
import traceback

from torchmem_hook import _common, _steps

_MAX_TEXT = 64 * 1024

# memory_stats() key -> wire name
_STAT_KEYS = (
    ("allocated_bytes.all.current", "allocated"),
    ("reserved_bytes.all.current", "reserved"),
    ("active_bytes.all.current", "active"),
    ("inactive_split_bytes.all.current", "inactive_split"),
    ("allocated_bytes.all.peak", "peak_allocated"),
    ("reserved_bytes.all.peak", "peak_reserved"),
    ("active_bytes.all.peak", "peak_active"),
    ("num_alloc_retries", "num_alloc_retries"),
    ("num_ooms", "num_ooms"),
    ("num_device_alloc", "num_device_alloc"),
    ("num_device_free", "num_device_free"),
    ("inactive_split.all.current", "inactive_split_blocks"),
)

_record_history = False
_notices = []


def notice(agent, text):
    """Tell the supervisor the hook degraded, through agent (None: not
    started); queued until hello is sent."""
    if agent is not None and agent.hello_sent:
        agent.enqueue({"type": "notice", "text": text})
    else:
        _notices.append(text)


def _env_int(name):
    try:
        return int(os.environ.get(name, ""))
    except ValueError:
        return None


def cuda_initialized(torch):
    try:
        return bool(torch.cuda.is_initialized())
    except Exception:
        return False


def device_stats(torch, device):
    raw = torch.cuda.memory_stats(device)
    d = {"device": int(device)}
    for key, name in _STAT_KEYS:
        d[name] = int(raw.get(key, 0))
    return d


def all_device_stats(torch):
    """Stats of the devices this process uses: the current one and any with
    reserved memory. Empty while CUDA is not initialised."""
    if not cuda_initialized(torch):
        return []
    out = []
    try:
        cur = torch.cuda.current_device()
        for dev in range(torch.cuda.device_count()):
            d = device_stats(torch, dev)
            if dev == cur or d["reserved"] > 0:
                out.append(d)
    except Exception:
        _common.debug()
    return out


def worker_info(torch):
    try:
        data = sys.modules.get("torch.utils.data")
        if data is None:
            return None
        return data.get_worker_info()
    except Exception:
        return None


def _is_launcher():
    """torchrun (or python -m torch.distributed.run/launch) itself."""
    argv = [str(a) for a in _common.start_argv[:6]]
    for i, a in enumerate(argv):
        if os.path.basename(a) == "torchrun":
            return True
        if a == "-m" and i + 1 < len(argv) and argv[i + 1] in ("torch.distributed.run", "torch.distributed.launch"):
            return True
    return False


def hello(agent):
    torch = agent.torch
    msg = {
        "type": "hello",
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "worker": agent.worker,
        "child": agent.child,
        "launcher": _is_launcher(),
        "torch": str(getattr(torch, "__version__", "")),
        "cuda": str(getattr(getattr(torch, "version", None), "cuda", None) or ""),
        "python": sys.version.split()[0],
        "argv": [str(a)[:512] for a in sys.argv[:64]],
        "step_hook": _steps.hook_kind,
        "record_history": _record_history,
        "hook_version": _common.HOOK_VERSION,
        "cuda_initialized": cuda_initialized(torch),
    }
    for env, key in (("RANK", "rank"), ("LOCAL_RANK", "local_rank"), ("WORLD_SIZE", "world_size")):
        v = _env_int(env)
        if v is not None:
            msg[key] = v
    if agent.worker_id is not None:
        msg["worker_id"] = int(agent.worker_id)
    return msg


def pending_notices():
    out = [{"type": "notice", "text": t} for t in _notices]
    del _notices[:]
    return out


def stats_message(agent, kind):
    msg = {"type": kind, "t": time.time(), "cuda_initialized": cuda_initialized(agent.torch)}
    if agent.step is not None:
        msg["step"] = agent.step
    devs = all_device_stats(agent.torch)
    if devs:
        msg["devices"] = devs
        agent.cuda_devices = [d["device"] for d in devs]
    return msg


# ---- installation (by _agent, which passes current) -------------------------


def install_worker_hook(torch, current):
    """Wrap torch's DataLoader worker loop so a worker says it is one before
    doing anything. The Process target is looked up (fork) or unpickled by
    name (spawn) after this runs, so both start methods get the wrapper."""
    import functools
    import inspect

    import torch.utils.data._utils.worker as w

    orig = w._worker_loop
    sig = inspect.signature(orig)

    @functools.wraps(orig)
    def _worker_loop(*args, **kwargs):
        try:
            wid = sig.bind_partial(*args, **kwargs).arguments.get("worker_id")
            a = current()
            if a is not None and not a.closed:
                a.worker_started(wid)
        except Exception:
            _common.debug()
        return orig(*args, **kwargs)

    w._worker_loop = _worker_loop


def _is_oom(exc):
    if isinstance(exc, MemoryError):
        return True
    name = type(exc).__name__
    if name == "OutOfMemoryError":
        return True
    return isinstance(exc, RuntimeError) and "out of memory" in str(exc)


def _exception_message(agent, exc_type, exc, tb, thread=None):
    text = "".join(traceback.format_exception(exc_type, exc, tb))
    if len(text) > _MAX_TEXT:  # keep the head and the message at the end
        text = text[:8192] + "\n[... truncated by torchmem ...]\n" + text[-(_MAX_TEXT - 8300):]
    msg = {
        "type": "exception",
        "t": time.time(),
        "exc_type": "%s.%s" % (exc_type.__module__, exc_type.__qualname__),
        "oom": _is_oom(exc),
        "text": text,
    }
    if thread:
        msg["thread"] = thread
    if agent.step is not None:
        msg["step"] = agent.step
    return msg


def _report_exception(current, exc_type, exc, tb, thread=None):
    try:
        if exc_type is None or issubclass(exc_type, (KeyboardInterrupt, SystemExit)):
            return
        a = current()
        if a is not None:
            a.send_now(_exception_message(a, exc_type, exc, tb, thread))
    except Exception:
        _common.debug()


def install_excepthooks(torch, current):
    prev = sys.excepthook

    def excepthook(exc_type, exc, tb):
        _report_exception(current, exc_type, exc, tb)
        prev(exc_type, exc, tb)

    sys.excepthook = excepthook
    import threading

    tprev = getattr(threading, "excepthook", None)
    if tprev is None:
        return

    def texcepthook(args):
        name = getattr(args.thread, "name", None) if args.thread is not None else None
        if name != "torchmem-hook":
            _report_exception(current, args.exc_type, args.exc_value, args.exc_traceback, name)
        tprev(args)

    threading.excepthook = texcepthook


def install_atexit(torch, current):
    import atexit

    def bye():
        a = current()
        if a is None or a.closed:
            return
        try:
            if not a.worker:
                steps = a.flush_steps()
                if steps is not None:
                    a.queue.append(steps)
                a.queue.append(stats_message(a, "stats"))
            msg = {"type": "bye", "t": time.time()}
            if a.step is not None:
                msg["step"] = a.step
            a.send_now(msg)
        except Exception:
            _common.debug()

    atexit.register(bye)
