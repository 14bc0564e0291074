"""A caching allocator as small as can be: one segment per block size
(2 MiB multiples), freed blocks keep their segment for the next request of
that size; the history is kept as CUDACachingAllocator keeps it."""
import sys
import time

SEG = 2 << 20
history = None  # the arguments _record_memory_history got
trace = []
segments = {}  # addr -> [size, block size requested or 0 when free]
live = {}  # addr -> requested size
peak = [0, 0]  # allocated, reserved
next_addr = [1 << 40]


def _record_memory_history(enabled="all", context="all", stacks="all", max_entries=0):
    global history
    import torch

    assert torch.cuda.is_initialized(), "the hook initialised CUDA"
    history = dict(enabled=enabled, context=context, stacks=stacks, max_entries=max_entries)


def _now():
    time.sleep(0.002)  # events and the hook's phase marks apart in time
    return int(time.time() * 1e6)


def _frames():
    out, f = [], sys._getframe(2)
    while f is not None:
        out.append({"filename": f.f_code.co_filename, "line": f.f_lineno, "name": f.f_code.co_name})
        f = f.f_back
    return out


def _entry(action, addr, size):
    if history is not None:
        trace.append({"action": action, "addr": addr, "size": size, "stream": 0, "time_us": _now(),
                      "frames": _frames()})


def alloc(size):
    import torch

    torch.cuda._lazy_init()
    seg = -(-size // SEG) * SEG
    addr = next((a for a, s in segments.items() if s[0] == seg and s[1] == 0), None)
    if addr is None:
        addr = next_addr[0]
        next_addr[0] += seg
        segments[addr] = [seg, 0]
        _entry("segment_alloc", addr, seg)
    segments[addr][1] = size
    live[addr] = size
    _entry("alloc", addr, size)
    peak[0] = max(peak[0], sum(live.values()))
    peak[1] = max(peak[1], sum(s[0] for s in segments.values()))
    return addr


def free(addr):
    size = live.pop(addr)
    segments[addr][1] = 0
    _entry("free_requested", addr, size)
    _entry("free_completed", addr, size)


def _stats():
    return {"allocated_bytes.all.peak": peak[0], "reserved_bytes.all.peak": peak[1],
            "allocated_bytes.all.current": sum(live.values()), "num_ooms": 0}


def _snapshot():
    segs = []
    for addr, (size, used) in sorted(segments.items()):
        blocks = []
        if used:
            blocks.append({"address": addr, "size": used, "requested_size": used, "state": "active_allocated",
                           "frames": []})
        if size > used:
            blocks.append({"address": addr + used, "size": size - used, "requested_size": 0, "state": "inactive",
                           "frames": []})
        segs.append({"device": 0, "address": addr, "total_size": size, "allocated_size": used,
                     "active_size": used, "requested_size": used, "stream": 0, "segment_type": "large",
                     "segment_pool_id": (0, 0), "is_expandable": False, "frames": [], "blocks": blocks})
    # allocator_settings carries the history's arguments for the test
    return {"segments": segs, "device_traces": [list(trace)], "allocator_settings": dict(history or {}),
            "external_annotations": []}
