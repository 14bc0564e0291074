package python

import (
	"os/exec"
	"testing"
)

// TestNoImportCycle writes the embedded package out as hook.Install does
// and runs testdata/importgraph.py over it: no import cycle among the
// hook's modules (imports inside functions count), only the package
// itself imports _agent (the others get the agent passed in), and each
// module imports alone, without torch. Fast enough for -short.
func TestNoImportCycle(t *testing.T) {
	py, dir := pythonAndTree(t)
	out, err := exec.Command(py, "-B", "testdata/importgraph.py", dir).CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("importgraph.py: %v", err)
	}
}

// pythonAndTree: python3 (the test skips without one) and a temporary
// directory holding the embedded package, as hook.Install writes it.
func pythonAndTree(t *testing.T) (string, string) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	dir := t.TempDir()
	if err := WriteTree(dir); err != nil {
		t.Fatal(err)
	}
	return py, dir
}
