"""CUDA-side pieces: armed through torch.cuda._lazy_call, so they run inside
torch's own lazy initialisation (right after the allocator exists, before
the first allocation) and never cause it. OOM observer, history recording,
and the commands cleanup / snapshot / reset_peaks. The observer reports to
the agent that `current` returns (given by _agent); commands get it."""

import gc
import os
import time

from torchmem_hook import _common, _cycles, _host
from torchmem_hook import _torchstats as ts

_oom_count = 0


def record_history_entries():
    try:
        n = int(os.environ.get("TORCHMEM_RECORD_HISTORY", "0"))
    except ValueError:
        return 0
    return n if n > 0 else 0


def install_cuda_init(torch, current):
    """Queue _on_cuda_init to run when the program initialises CUDA."""
    cuda = getattr(torch, "cuda", None)
    if cuda is None:
        return
    lazy = getattr(cuda, "_lazy_call", None)
    if lazy is None:
        ts.notice(current(), "torch.cuda has no _lazy_call: no OOM observer")
        return

    def on_init():
        try:
            _on_cuda_init(torch, current)
        except Exception:  # never surface as DeferredCudaCallError
            _common.debug()

    lazy(on_init)


def _on_cuda_init(torch, current):
    n = record_history_entries()
    if n:
        err = _start_history(torch, n)
        if err:
            ts.notice(current(), "history recording unavailable: " + err)
        else:
            ts._record_history = True
    attach = getattr(torch._C, "_cuda_attach_out_of_memory_observer", None)
    if attach is None:
        ts.notice(current(), "torch %s has no OOM observer: CUDA OOMs are seen only as exceptions" % torch.__version__)
        return
    attach(_observer(torch, current))


def _start_history(torch, n):
    mem = getattr(torch.cuda, "memory", None)
    rec = getattr(mem, "_record_memory_history", None)
    if rec is None:
        return "torch.cuda.memory._record_memory_history missing"
    try:
        rec(enabled="all", context="all", stacks="python", max_entries=n)  # torch >= 2.1
        return ""
    except TypeError:
        pass
    try:
        rec(True, trace_alloc_max_entries=n, trace_alloc_record_context=True)  # torch 2.0
        return ""
    except Exception as err:
        return str(err)


def _snapshot_path(kind):
    d = os.environ.get("TORCHMEM_SNAPSHOT_DIR") or os.environ.get("TORCHMEM_HOOK_DIR") or "."
    return os.path.join(d, "%s-%d-%d.pickle" % (kind, os.getpid(), int(time.time() * 1000)))


def _dump(torch, path):
    """Dump the allocator's history to path, making its directory first:
    torchmem creates the run's snapshot directory only when a snapshot is
    written, so runs without one leave no empty directory behind."""
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, mode=0o700, exist_ok=True)
    torch.cuda.memory._dump_snapshot(path)


def _observer(torch, current):
    def on_oom(device, alloc, device_alloc, device_free):
        # Runs in the allocating thread while the tensors are still alive.
        global _oom_count
        try:
            _oom_count += 1
            a = current()
            if a is None or a.closed:
                return
            msg = {"type": "oom", "t": time.time(), "device": int(device), "alloc": int(alloc),
                   "device_alloc": int(device_alloc), "device_free": int(device_free)}
            if a.step is not None:
                msg["step"] = a.step
            try:
                msg["stats"] = ts.device_stats(torch, int(device))
            except Exception:
                pass
            if ts._record_history:
                path = _snapshot_path("oom")
                try:
                    _dump(torch, path)
                    msg["snapshot"] = path
                except Exception as err:
                    msg["snapshot_error"] = str(err)[:500]
            a.send_now(msg)
        except Exception:
            _common.debug()

    return on_oom


def run_command(agent, cmd):
    """Run one supervisor command; returns the ack message."""
    torch = agent.torch
    kind = cmd.get("type")
    ack = {"type": "ack", "id": cmd.get("id", 0), "cmd": kind, "ok": True}
    try:
        if kind == "cleanup":
            _cleanup(torch, ack)
        elif kind == "snapshot":
            if not ts.cuda_initialized(torch):
                raise RuntimeError("CUDA is not initialised in this process")
            path = str(cmd.get("path") or _snapshot_path("snapshot")).replace("{pid}", str(os.getpid()))
            _dump(torch, path)
            ack["path"] = path
        elif kind == "reset_peaks":
            if ts.cuda_initialized(torch):
                for d in ts.all_device_stats(torch):
                    torch.cuda.reset_peak_memory_stats(d["device"])
        else:
            raise ValueError("unknown command %r" % (kind,))
    except Exception as err:
        ack["ok"] = False
        ack["error"] = ("%s: %s" % (type(err).__name__, err))[:1000]
    return ack


def _cleanup(torch, ack):
    """gc.collect(), empty_cache(), malloc_trim(0). The ack says what each
    gave back: freed (reserved GPU bytes), gc_collected / gc_uncollectable
    (gc.get_stats() over the collection), host_freed (the fall in resident
    bytes over the whole cleanup), trim_freed (over malloc_trim alone; absent
    without glibc)."""
    before = _reserved(torch)
    rss = _host.rss_bytes()
    st = gc.get_stats()
    gc.collect()
    after = gc.get_stats()
    _cycles.free_saved()  # with --detect-cycles the collection only saved them
    ack["gc_collected"] = sum(b["collected"] - a["collected"] for a, b in zip(st, after))
    ack["gc_uncollectable"] = sum(b["uncollectable"] - a["uncollectable"] for a, b in zip(st, after))
    if ts.cuda_initialized(torch):
        torch.cuda.empty_cache()
    ack["freed"] = max(0, before - _reserved(torch))
    ran, trimmed = _host.trim()
    if ran and trimmed is not None:
        ack["trim_freed"] = trimmed
    rss_after = _host.rss_bytes()
    if rss is not None and rss_after is not None:
        ack["host_freed"] = max(0, rss - rss_after)


def _reserved(torch):
    return sum(d["reserved"] for d in ts.all_device_stats(torch))
