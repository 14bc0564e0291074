package python

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// checkerPython is a python3 of 3.8 or later, which compat36.py needs for
// ast.parse(feature_version=(3, 6)); Debian 12's is 3.11.
func checkerPython(t *testing.T) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3: the Python 3.6 compatibility check needs one (3.8+)")
	}
	if exec.Command(py, "-c", "import sys; sys.exit(sys.version_info < (3, 8))").Run() != nil {
		t.Skipf("%s is older than 3.8: ast.parse has no feature_version", py)
	}
	return py
}

func compat36(t *testing.T, py string, files ...string) (string, error) {
	t.Helper()
	out, err := exec.Command(py, append([]string{"-B", "testdata/compat36.py"}, files...)...).CombinedOutput()
	return string(out), err
}

// TestSourcesParseAsPython36: every Python file of the hook parses with
// Python 3.6's grammar and uses no 3.7+ API without a guard. This runs
// wherever a python3 ≥ 3.8 is (CI included); the hook's behaviour on a
// real 3.6 is TestHookOnPython36 in internal/hook.
func TestSourcesParseAsPython36(t *testing.T) {
	py := checkerPython(t)
	dir := t.TempDir()
	if err := WriteTree(dir); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.py"))
	more, _ := filepath.Glob(filepath.Join(dir, "torchmem_hook", "*.py"))
	files = append(files, more...)
	if len(files) < 5 {
		t.Fatalf("found only %v", files)
	}
	if out, err := compat36(t, py, files...); err != nil {
		t.Fatalf("the hook must run on Python 3.6:\n%s(%v)", out, err)
	}
}

// TestCompat36RejectsNewerPython: the check finds each kind of problem.
func TestCompat36RejectsNewerPython(t *testing.T) {
	py := checkerPython(t)
	cases := []struct{ src, want string }{
		{"if (n := 3):\n    pass\n", "syntax newer than Python 3.6"},
		{"def f(a, /):\n    return a\n", "syntax newer than Python 3.6"},
		{"from __future__ import annotations\n", "__future__ import annotations"},
		{"import os\nos.register_at_fork(after_in_child=print)\n", ".register_at_fork is newer"},
		{"import threading\nthreading.excepthook = print\n", ".excepthook is newer"},
		{"import time\nt = time.monotonic_ns()\n", ".monotonic_ns is newer"},
		{"import dataclasses\n", "module dataclasses is newer"},
		{"from contextvars import ContextVar\n", "module contextvars is newer"},
		{"breakpoint()\n", "breakpoint() is Python 3.7+"},
		// Guarded uses and older namesakes pass.
		{"import os\nif hasattr(os, 'register_at_fork'):\n    os.register_at_fork(after_in_child=print)\n", ""},
		{"try:\n    import contextvars\nexcept ImportError:\n    contextvars = None\n", ""},
		{"import sys\nsys.excepthook(*sys.exc_info())\n", ""},
		{"x = f'{1 + 1}'\n", ""}, // f-strings are 3.6
	}
	dir := t.TempDir()
	for i, c := range cases {
		p := filepath.Join(dir, "case"+string(rune('a'+i))+".py")
		if err := os.WriteFile(p, []byte(c.src), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := compat36(t, py, p)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(out, c.want)) {
			t.Errorf("%q: %v %q, want %q", c.src, err, out, c.want)
		}
	}
}
