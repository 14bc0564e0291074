"""Host-side memory of this process, for the cleanup command: the resident
set size from /proc/self/statm (second field, in pages:
"1634213 74511 10742 1 0 137904 0") and glibc's malloc_trim(0), which
returns the free pages of every malloc arena to the kernel. Freed Python
objects larger than 512 bytes (and everything C extensions free) stay in
glibc's heap otherwise. Imports nothing of the hook but _common."""

import os

from torchmem_hook import _common

_trim = None  # malloc_trim from libc; False once known to be missing


def rss_bytes():
    """Resident bytes of this process, or None where /proc is missing."""
    try:
        with open("/proc/self/statm") as f:
            return parse_statm(f.read())
    except (OSError, ValueError, IndexError):
        return None


def parse_statm(text):
    """Resident bytes from the text of /proc/self/statm."""
    return int(text.split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _malloc_trim():
    global _trim
    if _trim is None:
        _trim = False
        try:
            import ctypes

            fn = ctypes.CDLL(None).malloc_trim  # AttributeError: not glibc (musl, macOS)
            fn.argtypes = [ctypes.c_size_t]
            fn.restype = ctypes.c_int
            _trim = fn
        except Exception:
            _common.debug()
    return _trim


def trim():
    """Run malloc_trim(0). Returns (ran, resident bytes returned): ran is
    False without glibc; bytes are None where RSS cannot be read."""
    fn = _malloc_trim()
    if not fn:
        return False, None
    before = rss_bytes()
    fn(0)
    after = rss_bytes()
    if before is None or after is None:
        return True, None
    return True, max(0, before - after)
