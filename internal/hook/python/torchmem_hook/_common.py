"""What every module of the hook shares, and nothing else: the versions,
the command line as the interpreter started, and the debug report. It
imports no other module of the hook, so any of them can import it."""

import os
import sys

HOOK_VERSION = 1
PROTOCOL_VERSION = 1

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
