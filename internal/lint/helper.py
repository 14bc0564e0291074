# torchmem lint helper: prints the ast of Python files as JSON, one line per file.
# Runs on Python 3.8 and newer with the standard library only. It never imports
# or executes the files it reads.
#
# stdin:  a JSON array of file paths
# stdout: one JSON object per path, in order:
#   {"path": P, "ast": NODE}                          parsed
#   {"path": P, "error": {"msg": M, "line": L, "col": C}}   syntax error or unreadable
# NODE is {"_": type, "l": line, "c": col (0-based, UTF-8 bytes), "e": end line
# (simple statements spanning lines), field: value...};
# fields that are None, empty lists and expression contexts are left out.
# With the argument --spans (torchmem lint --fix) every positioned node also
# carries "el" and "ec": its end line and end column (UTF-8 bytes).
import ast
import gc
import json
import sys

_SKIP = frozenset(("ctx", "type_comment", "kind", "type_ignores"))
_fields_cache = {}
_SPANS = "--spans" in sys.argv[1:]


def _fields(cls):
    f = _fields_cache.get(cls)
    if f is None:
        f = tuple(n for n in cls._fields if n not in _SKIP)
        _fields_cache[cls] = f
    return f


def _const(v):
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int) and -(2 ** 53) < v < 2 ** 53:
        return v
    if isinstance(v, float) and v == v and v not in (float("inf"), float("-inf")):
        return v
    return repr(v)[:64]


def conv(node):
    cls = node.__class__
    d = {"_": cls.__name__}
    ln = getattr(node, "lineno", None)
    if ln is not None:
        d["l"] = ln
        d["c"] = node.col_offset
        if isinstance(node, ast.stmt) and not hasattr(node, "body"):
            end = getattr(node, "end_lineno", None)
            if end is not None and end != ln:
                d["e"] = end
        if _SPANS and getattr(node, "end_lineno", None) is not None:
            d["el"] = node.end_lineno
            d["ec"] = node.end_col_offset
    if cls is ast.Constant:
        d["value"] = _const(node.value)
        return d
    for name in _fields(cls):
        v = getattr(node, name, None)
        if v is None:
            continue
        if isinstance(v, ast.AST):
            d[name] = conv(v)
        elif isinstance(v, list):
            if v:
                d[name] = [conv(x) if isinstance(x, ast.AST) else x for x in v]
        elif isinstance(v, (str, int)):
            d[name] = v
    return d


def one(path):
    try:
        with open(path, "rb") as f:
            src = f.read()
    except OSError as e:
        return {"path": path, "error": {"msg": "read: " + str(e.strerror or e), "line": 0, "col": 0}}
    try:
        tree = ast.parse(src, filename=path)
    except SyntaxError as e:
        return {"path": path, "error": {"msg": "syntax error: " + str(e.msg),
                                        "line": e.lineno or 0, "col": e.offset or 0}}
    except (ValueError, RecursionError, MemoryError) as e:
        return {"path": path, "error": {"msg": "cannot parse: " + str(e)[:200], "line": 0, "col": 0}}
    try:
        return {"path": path, "ast": conv(tree)}
    except RecursionError:
        return {"path": path, "error": {"msg": "cannot parse: nesting too deep", "line": 0, "col": 0}}


def main():
    if sys.version_info < (3, 8):
        sys.stderr.write("python %d.%d is too old: torchmem lint needs Python 3.8 or newer\n" % sys.version_info[:2])
        sys.exit(3)
    sys.setrecursionlimit(10000)
    # The trees hold no reference cycles, so reference counting frees them;
    # the cyclic collector would only rescan the ~10^5 fresh objects per
    # file again and again (a quarter of the helper's time).
    gc.disable()
    paths = json.load(sys.stdin)
    out = sys.stdout
    for p in paths:
        out.write(json.dumps(one(p), separators=(",", ":"), ensure_ascii=True))
        out.write("\n")
    out.flush()


if __name__ == "__main__":
    main()
