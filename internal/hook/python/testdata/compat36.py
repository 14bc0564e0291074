"""Checks that the hook's Python sources run on Python 3.6, the oldest the
hook arms under (CentOS 7's python3, RHEL 8's python3.6), without a 3.6
interpreter: run by TestSourcesParseAsPython36 with the system python3.

1. Grammar: ast.parse(feature_version=(3, 6)) rejects syntax from 3.7 on
   (walrus, positional-only parameters, parenthesised context managers,
   match, except*, ...). Running this check needs Python 3.8+.
2. APIs, from a curated list of names added in 3.7 and later that the
   hook's kind of code reaches for: such an attribute may only be used in a
   file that also looks it up by name (hasattr/getattr with the name as a
   string), i.e. behind a guard; such a module only inside a try that
   catches ImportError; no `from __future__ import annotations` (3.7); no
   breakpoint() (3.7).

Usage: compat36.py FILE... ; prints one line per problem, exit 1 if any.
"""

import ast
import sys

# "module.attr" where the bare name is also an older API elsewhere
# (sys.excepthook is 2.x, threading.excepthook 3.8).
NEW_ATTRS = {
    # 3.7
    "os.register_at_fork", "time.monotonic_ns", "time.time_ns", "time.perf_counter_ns",
    "time.process_time_ns", "time.thread_time", "time.thread_time_ns", "asyncio.get_running_loop",
    "asyncio.create_task", "asyncio.run", "contextlib.nullcontext", "isascii", "breakpointhook",
    "reconfigure", "pycache_prefix", "fromisoformat", "os.memfd_create",
    # 3.8
    "threading.excepthook", "orig_argv", "parent_process", "get_native_id", "native_id",
    "cached_property", "singledispatchmethod", "math.prod", "math.isqrt", "math.dist",
    "math.comb", "math.perm", "shared_memory", "unraisablehook", "addaudithook", "sys.audit",
    "fromisocalendar",
    # 3.9 and later
    "removeprefix", "removesuffix", "waitstatus_to_exitcode", "os.pidfd_open", "functools.cache",
}
NEW_MODULES = {
    "contextvars", "dataclasses", "importlib.resources", "importlib.metadata",  # 3.7, 3.8
    "multiprocessing.shared_memory", "zoneinfo", "graphlib", "tomllib",
}
IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}


def new_attr(node):
    """Whether an attribute node names a NEW_ATTRS entry: bare, or read
    from a module of that name (os.register_at_fork)."""
    if node.attr in NEW_ATTRS:
        return True
    return isinstance(node.value, ast.Name) and node.value.id + "." + node.attr in NEW_ATTRS


def guarded_names(tree):
    """The strings passed to hasattr/getattr anywhere in the file."""
    out = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("hasattr", "getattr") and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
            out.add(node.args[1].value)
    return out


def catches_import_error(try_node):
    for h in try_node.handlers:
        if h.type is None:
            return True
        types = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]
        if {t.id for t in types if isinstance(t, ast.Name)} & IMPORT_ERRORS:
            return True
    return False


def imported(node):
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom) and node.module:
        return [node.module] + [node.module + "." + a.name for a in node.names]
    return []


def check(path, src):
    try:
        tree = ast.parse(src, path, feature_version=(3, 6))
    except SyntaxError as err:
        return ["%s:%s: syntax newer than Python 3.6: %s" % (path, err.lineno, err.msg)]
    guarded = guarded_names(tree)
    protected = set()  # ids of nodes inside a try that catches ImportError
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and catches_import_error(node):
            for inner in node.body:
                protected.update(id(n) for n in ast.walk(inner))
    problems = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Attribute) and new_attr(node) and node.attr not in guarded:
            problems.append("%s:%d: .%s is newer than Python 3.6 and not behind hasattr/getattr(..., %r)" % (path, line, node.attr, node.attr))
        if isinstance(node, ast.ImportFrom) and node.module == "__future__" and any(a.name == "annotations" for a in node.names):
            problems.append("%s:%d: from __future__ import annotations is Python 3.7+" % (path, line))
        for mod in imported(node):
            if mod in NEW_MODULES and id(node) not in protected:
                problems.append("%s:%d: module %s is newer than Python 3.6; import it in a try that catches ImportError" % (path, line, mod))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "breakpoint":
            problems.append("%s:%d: breakpoint() is Python 3.7+" % (path, line))
    return problems


def main(paths):
    if sys.version_info < (3, 8):
        sys.stderr.write("compat36.py needs Python 3.8+ (ast.parse feature_version)\n")
        return 2
    problems = []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            problems += check(p, f.read())
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
