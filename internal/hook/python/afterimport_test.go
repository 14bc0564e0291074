package python

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAfterImportHalfMade: a package that imports what arms the hooks
// (bitsandbytes' __init__ imports torch, whose import starts the tracer)
// is hooked once its import has ended (at the next import: here the hook
// of "later" comes with it), with all its names, not while it is half made
// (no x, no sub); a module already imported is hooked at once, one not yet
// imported when it is. Needs only python3: fast enough for -short.
func TestAfterImportHalfMade(t *testing.T) {
	py, dir := pythonAndTree(t)
	pkg := filepath.Join(t.TempDir(), "pkgs")
	files := map[string]string{
		"arming.py": `from torchmem_hook import _common
import log
def hook(name):
    return lambda m: log.seen.append((name, sorted(k for k in vars(m) if not k.startswith("_"))))
_common.after_import({"halfmade": hook("halfmade"), "log": hook("log"), "later": hook("later")})
`,
		"log.py":   "seen = []\n",
		"later.py": "z = 3\n",
		"halfmade/__init__.py": `import arming
x = 1
from halfmade import sub
`,
		"halfmade/sub.py": "y = 2\n",
		"main.py": `import sys
import halfmade
import log
print(log.seen)
import later
print(log.seen)
`,
	}
	for name, text := range files {
		path := filepath.Join(pkg, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(py, "-B", filepath.Join(pkg, "main.py"))
	cmd.Env = append(os.Environ(), "PYTHONPATH="+dir+string(os.PathListSeparator)+pkg)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	want := []string{
		"[('log', ['seen'])]",
		"[('log', ['seen']), ('halfmade', ['arming', 'sub', 'x']), ('later', ['z'])]",
	}
	if len(lines) != 2 || lines[0] != want[0] || lines[1] != want[1] {
		t.Errorf("hooks saw\n%s\nwant\n%s", out, strings.Join(want, "\n"))
	}
}
