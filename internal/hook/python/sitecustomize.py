# torchmem's sitecustomize, put first on PYTHONPATH by `torchmem run`.
#
# 1. Chain: run the sitecustomize this one shadows (the next one found on
#    sys.path after this directory; Debian, Ubuntu, conda and many images
#    ship one), exactly as site.py would have, errors reported the same way.
# 2. Only when TORCHMEM_HOOK_SOCKET is set, arm the torchmem hook. Arming is
#    cheap: it waits for the program to import torch and never imports torch
#    itself. Nothing here may raise into the program or print.


def _torchmem_chain():
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    later = []
    seen_here = False
    for entry in sys.path:
        try:
            d = os.path.abspath(entry or os.getcwd())
        except Exception:
            continue
        if seen_here and d != here:
            later.append(entry)
        elif d == here:
            seen_here = True
    if not later:
        return
    if sys.version_info[0] < 3:
        return _torchmem_chain_py2(later)
    try:
        import importlib.machinery
        import importlib.util

        spec = importlib.machinery.PathFinder.find_spec("sitecustomize", later)
        if spec is None or spec.loader is None:
            return
        mod = importlib.util.module_from_spec(spec)
    except Exception:
        return
    try:
        spec.loader.exec_module(mod)
    except Exception as err:
        # site.py's own wording, so output matches a run without torchmem.
        if sys.flags.verbose:
            sys.excepthook(*sys.exc_info())
        else:
            sys.stderr.write(
                "Error in sitecustomize; set PYTHONVERBOSE for traceback:\n"
                "%s: %s\n" % (err.__class__.__name__, err)
            )
    # Modules that look themselves up as "sitecustomize" find the chained one's names too.
    me = sys.modules.get("sitecustomize")
    if me is not None and me is not mod:
        for k, v in vars(mod).items():
            if not k.startswith("__") and not hasattr(me, k):
                try:
                    setattr(me, k, v)
                except Exception:
                    pass


def _torchmem_chain_py2(later):
    # Python 2 has no importlib.machinery; the job must still get its own
    # sitecustomize (the hook itself needs Python >= 3.6 and stays off).
    import imp
    import sys

    try:
        found = imp.find_module("sitecustomize", later)
    except ImportError:
        return
    try:
        imp.load_module("_torchmem_chained_sitecustomize", *found)
    except Exception as err:
        sys.stderr.write(
            "Error in sitecustomize; set PYTHONVERBOSE for traceback:\n"
            "%s: %s\n" % (err.__class__.__name__, err)
        )
    finally:
        if found[0] is not None:
            found[0].close()


def _torchmem_arm():
    import os
    import sys

    # 3.6: CentOS 7's python3 and RHEL 8's python3.6. What 3.6 and 3.7 lack
    # degrades the hook (torchmem_hook._common.degraded says what).
    # TORCHMEM_TRACE: torchmem estimate --trace (torchmem_hook._trace).
    on = os.environ.get("TORCHMEM_HOOK_SOCKET") or os.environ.get("TORCHMEM_TRACE")
    if not on or sys.version_info < (3, 6):
        return
    try:
        import torchmem_hook

        torchmem_hook.arm()
    except Exception:
        pass


try:
    _torchmem_chain()
except Exception:
    pass
_torchmem_arm()
del _torchmem_chain, _torchmem_chain_py2, _torchmem_arm
