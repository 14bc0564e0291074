"""--detect-cycles: report reference cycles that held tensors when the
garbage collector freed them. A tensor kept alive only by a cycle (a model
that stores itself in a closure, an exception's traceback kept in a dict)
is freed only when the cyclic collector runs, so its memory lingers for
an unknown time; this finds them, with the types of the cycle's objects
and, through tracemalloc, the lines that created them.

How: a gc.callbacks entry sets gc.DEBUG_SAVEALL for the duration of each
collection, so what the collector found unreachable lands in gc.garbage
instead of being freed. At "stop" it takes that slice out of gc.garbage,
splits it into connected components, reports those holding a torch.Tensor
(at most `limit` reports in all), and asks the agent's thread for a quiet
collection that frees them (with DEBUG_SAVEALL they survived into the
next generation). Finalizers and weakref callbacks have already run by
then, exactly as without torchmem; only the freeing is a moment later.

Enabled by TORCHMEM_DETECT_CYCLES (the most reports; torchmem run sets it
with --detect-cycles). Imports nothing of the hook but _common."""

import gc
import os
import time
import weakref

from torchmem_hook import _common

MAX_OBJECTS = 200000  # objects of one collection looked at
MAX_TYPES = 10  # object types listed per report
MAX_TENSORS = 5  # tensors described per report
TRACE_FRAMES = 4
FULL_GAP = 1.0  # seconds between quiet full collections

_detector = None


def limit_from_env():
    try:
        n = int(os.environ.get("TORCHMEM_DETECT_CYCLES", "0"))
    except ValueError:
        return 0
    return n if n > 0 else 0


def install(torch, current):
    """Start detecting when TORCHMEM_DETECT_CYCLES asks for it."""
    global _detector
    n = limit_from_env()
    if not n or _detector is not None:
        return
    import tracemalloc

    if not tracemalloc.is_tracing():  # the program's own tracing wins
        tracemalloc.start(TRACE_FRAMES)
    _detector = Detector(torch, current, n)
    gc.callbacks.append(_detector.callback)


def tick():
    """From the agent's thread: run the quiet collection that frees what
    the last collections saved, if one is pending. A full one (after a
    collection of generation 1 or 2) runs at most every FULL_GAP seconds.
    Returns None when nothing is pending, else the seconds until it is due."""
    d = _detector
    if d is None or d.pending < 0:
        return None
    wait = d.last_full + FULL_GAP - time.monotonic()
    if d.pending == 2 and wait > 0:
        return wait
    free_saved()
    return None


def free_saved():
    """Run the pending quiet collection now (the cleanup command runs it
    at once); returns the objects it freed."""
    d = _detector
    if d is None or d.pending < 0:
        return 0
    gen, d.pending = d.pending, -1
    d.quiet = True
    try:
        return gc.collect(gen)
    finally:
        d.quiet = False
        if gen == 2:
            d.last_full = time.monotonic()
        d.seen = {k: r for k, r in d.seen.items() if r() is not None}


class Detector(object):
    def __init__(self, torch, current, limit):
        self.torch, self.current, self.limit = torch, current, limit
        self.reports = 0
        self.quiet = False  # our own freeing collection: not examined
        self.mark = None  # len(gc.garbage) at "start", None outside a collection
        self.flags = 0
        self.pending = -1  # generation to collect quietly, -1: none
        self.last_full = 0.0
        # Tensors reported and not yet freed (id -> weakref): a collection
        # before the quiet one saves them again, and must not report twice.
        self.seen = {}
        self.skip = [os.path.dirname(os.path.abspath(__file__))]
        tfile = getattr(torch, "__file__", None)
        if tfile:
            self.skip.append(os.path.dirname(os.path.abspath(tfile)))

    def callback(self, phase, info):
        try:
            if self.quiet:
                return
            if phase == "start":
                self.flags = gc.get_debug()
                if self.flags & gc.DEBUG_SAVEALL:
                    return  # the program keeps its garbage itself
                self.mark = len(gc.garbage)
                gc.set_debug(self.flags | gc.DEBUG_SAVEALL)
            elif phase == "stop" and self.mark is not None:
                self._stop(info)
        except Exception:
            _common.debug()

    def _stop(self, info):
        gc.set_debug(self.flags)
        mark, self.mark = self.mark, None
        saved = gc.garbage[mark:]
        del gc.garbage[mark:]
        if not saved:
            return
        a = self.current()
        gen = min(int(info.get("generation", 2)) + 1, 2)
        self.pending = max(self.pending, gen)
        if a is None or a.closed:
            self.uninstall()
            return
        for msg in self._reports(saved, int(info.get("generation", -1))):
            a.enqueue(msg)
        a.request_collect()
        if self.reports >= self.limit:
            a.enqueue({"type": "notice", "text": "cycle detection: %d reports sent, no more in this process" % self.reports})
            self.uninstall()

    def uninstall(self):
        try:
            gc.callbacks.remove(self.callback)
        except ValueError:
            pass

    def _reports(self, saved, gen):
        tensor = getattr(self.torch, "Tensor", None)
        if tensor is None:
            return []
        saved = saved[:MAX_OBJECTS]
        if not any(isinstance(o, tensor) for o in saved):
            return []
        out = []
        for comp in components(saved):
            if self.reports >= self.limit:
                break
            tensors = [o for o in comp if isinstance(o, tensor)]
            if tensors and not all([self._seen(t) for t in tensors]):  # a list: mark each
                self.reports += 1
                out.append(self._report(comp, tensors, gen))
        return out

    def _seen(self, t):
        r = self.seen.get(id(t))
        if r is not None and r() is t:
            return True
        try:
            self.seen[id(t)] = weakref.ref(t)
        except TypeError:
            pass
        return False

    def _report(self, comp, tensors, gen):
        counts = {}
        for o in comp:
            t = type(o)
            name = "%s.%s" % (t.__module__, t.__qualname__) if t.__module__ != "builtins" else t.__qualname__
            counts[name] = counts.get(name, 0) + 1
        types = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_TYPES]
        msg = {
            "type": "cycle",
            "t": time.time(),
            "generation": gen,
            "objects": len(comp),
            "tensors": len(tensors),
            "tensor_bytes": sum(tensor_bytes(t) for t in tensors),
            "types": [{"type": k, "count": v} for k, v in types],
            "tensor_list": [describe(t) for t in tensors[:MAX_TENSORS]],
            "report": self.reports,
        }
        lines = self._lines(comp, tensors)
        if lines:
            msg["lines"] = lines
        a = self.current()
        if a is not None and a.step is not None:
            msg["step"] = a.step
        return msg

    def _lines(self, comp, tensors):
        """Where the tensors and the cycle's other objects were created
        (tracemalloc), the innermost frame outside torch and the hook."""
        import tracemalloc

        if not tracemalloc.is_tracing():
            return []
        out = []
        for o in list(tensors[:MAX_TENSORS]) + [o for o in comp if not isinstance(o, (dict, list, tuple))][:20]:
            tb = tracemalloc.get_object_traceback(o)
            line = self._frame(tb) if tb is not None else None
            if line and line not in out:
                out.append(line)
            if len(out) >= 5:
                break
        return out

    def _frame(self, tb):
        frames = list(tb)  # oldest first
        for f in reversed(frames):
            path = os.path.abspath(f.filename)
            if not any(path.startswith(s + os.sep) for s in self.skip):
                return "%s:%d" % (f.filename, f.lineno)
        return "%s:%d" % (frames[-1].filename, frames[-1].lineno) if frames else None


def components(objs):
    """The connected components of objs under gc.get_referents, restricted
    to objs (union-find over ids)."""
    index = {id(o): i for i, o in enumerate(objs)}
    parent = list(range(len(objs)))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, o in enumerate(objs):
        for r in gc.get_referents(o):
            j = index.get(id(r))
            if j is not None:
                a, b = find(i), find(j)
                if a != b:
                    parent[a] = b
    groups = {}
    for i, o in enumerate(objs):
        groups.setdefault(find(i), []).append(o)
    return list(groups.values())


def tensor_bytes(t):
    try:
        return int(t.element_size()) * int(t.nelement())
    except Exception:
        return 0


def describe(t):
    d = {"bytes": tensor_bytes(t)}
    try:
        d["shape"] = [int(x) for x in t.shape]
        d["dtype"] = str(t.dtype)
        d["device"] = str(t.device)
    except Exception:
        pass
    return d

