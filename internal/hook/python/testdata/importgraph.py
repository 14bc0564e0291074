"""Checks the layout of the torchmem_hook package in DIR (the directory
holding torchmem_hook/): no two of its modules import each other in a
cycle, counting imports inside functions; only the package itself imports
_agent, the module that owns the connection; and each module imports alone
in a fresh interpreter without importing torch. Prints the import graph;
exits 1 with the reason when a check fails.

usage: python3 importgraph.py DIR
"""

import ast
import os
import subprocess
import sys

PKG = "torchmem_hook"
OWNER = "_agent"


def modules(pkgdir):
    return sorted(f[:-3] for f in os.listdir(pkgdir) if f.endswith(".py"))


def edges(pkgdir, mod, mods):
    """The package's modules mod imports, anywhere in its code."""
    with open(os.path.join(pkgdir, mod + ".py")) as f:
        tree = ast.parse(f.read(), mod + ".py")
    out = set()

    def target(dotted):
        parts = dotted.split(".")
        if parts[0] != PKG:
            return None
        return parts[1] if len(parts) > 1 else "__init__"

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                t = target(a.name)
                if t:
                    out.add(t)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from . import x, from ._x import y
                base = PKG + ("." + base if base else "")
            t = target(base)
            if t is None:
                continue
            if t != "__init__":
                out.add(t)
                continue
            for a in node.names:  # from torchmem_hook import _x (a module) or a name of __init__
                out.add(a.name if a.name in mods else "__init__")
    out.discard(mod)
    return out


def find_cycle(graph):
    state, stack = {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == "open":
                return stack[stack.index(n):] + [n]
            if n not in state:
                c = visit(n)
                if c:
                    return c
        stack.pop()
        state[m] = "done"
        return None

    for m in sorted(graph):
        if m not in state:
            c = visit(m)
            if c:
                return c
    return None


def main():
    root = sys.argv[1]
    pkgdir = os.path.join(root, PKG)
    mods = modules(pkgdir)
    graph = {m: edges(pkgdir, m, mods) for m in mods}
    for m in mods:
        print("%s -> %s" % (m, ", ".join(sorted(graph[m])) or "-"))
    failed = False
    cycle = find_cycle(graph)
    if cycle:
        print("FAIL: import cycle: " + " -> ".join(cycle))
        failed = True
    for m in mods:
        if OWNER in graph[m] and m != "__init__":
            print("FAIL: %s imports %s; the hooks get the agent passed in" % (m, OWNER))
            failed = True
    for m in mods:
        name = PKG if m == "__init__" else PKG + "." + m
        code = ("import sys; sys.path.insert(0, %r); import %s; "
                "assert 'torch' not in sys.modules, 'imported torch'" % (root, name))
        p = subprocess.run([sys.executable, "-S", "-B", "-c", code], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True)
        if p.returncode != 0:
            print("FAIL: import %s alone:\n%s" % (name, p.stdout))
            failed = True
    if failed:
        sys.exit(1)
    print("ok: %d modules, no import cycle" % len(mods))


main()
