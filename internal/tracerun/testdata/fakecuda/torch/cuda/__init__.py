import types

from torch.cuda import memory  # noqa: F401


_initialized = [False]
_queued = []


def is_available():
    return True


def is_initialized():
    return _initialized[0]


def _lazy_call(fn):
    if _initialized[0]:
        fn()
    else:
        _queued.append(fn)


def _lazy_init():
    """What the program's first CUDA call does: queued calls run first."""
    if not _initialized[0]:
        _initialized[0] = True
        for fn in _queued:
            fn()


def current_device():
    return 0


def synchronize():
    pass


def get_device_properties(i):
    return types.SimpleNamespace(name="Fake GPU", total_memory=80 << 30, major=9, minor=0)


def memory_stats():
    return memory._stats()
