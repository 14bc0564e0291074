package hook

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// python36 finds a Python 3.6 interpreter (CentOS 7's python3, RHEL 8's
// python3.6 are 3.6, the oldest the hook supports): TORCHMEM_PY36, else a
// pyenv 3.6 under $PYENV_ROOT (or ~/.pyenv), else python3.6 on PATH.
func python36() string {
	if p := os.Getenv("TORCHMEM_PY36"); p != "" {
		return p
	}
	root := os.Getenv("PYENV_ROOT")
	if root == "" {
		if home, err := os.UserHomeDir(); err == nil {
			root = filepath.Join(home, ".pyenv")
		}
	}
	if root != "" {
		m, _ := filepath.Glob(filepath.Join(root, "versions", "3.6.*", "bin", "python3.6"))
		sort.Strings(m)
		if len(m) > 0 {
			return m[len(m)-1]
		}
	}
	if p, err := exec.LookPath("python3.6"); err == nil {
		return p
	}
	return ""
}

// TestHookOnPython36 runs the hook's torch-free tests (the fake torch of
// testdata) under Python 3.6: no PyTorch wheel for 3.6 exists on this
// machine's package sources, so the fake stands in for torch 2.x's API.
// The static check TestSourcesParseAsPython36 (hook/python) runs everywhere.
func TestHookOnPython36(t *testing.T) {
	py := python36()
	if py == "" {
		t.Skip("no Python 3.6 interpreter: set TORCHMEM_PY36=/path/to/python3.6 (pyenv install 3.6.15) to run the hook's tests on it")
	}
	out, err := exec.Command(py, "-c", "import sys; print('%d.%d' % sys.version_info[:2])").Output()
	if err != nil || strings.TrimSpace(string(out)) != "3.6" {
		t.Fatalf("%s is not Python 3.6: %v %q", py, err, out)
	}
	t.Logf("Python 3.6: %s", py)
	t.Run("cuda paths", func(t *testing.T) { t.Parallel(); testCUDAPathsWithFakeTorch(t, py) })
	t.Run("step apis", func(t *testing.T) { testStepCountingAcrossStepAPIs(t, py) })
	t.Run("broken chained sitecustomize", func(t *testing.T) { t.Parallel(); testBrokenChainedSitecustomize(t, py) })
	t.Run("no torch", func(t *testing.T) { t.Parallel(); testNoTorchNoImportNoConnection(t, py) })
	t.Run("fork", func(t *testing.T) { t.Parallel(); testForkedChild(t, py, true) })
}

// TestForkedChildConnectsOnItsOwn: a child forked after torch is imported
// says hello on a connection of its own (os.register_at_fork from Python
// 3.7; the pid check of current() on 3.6), and the parent's stream stays
// whole.
func TestForkedChildConnectsOnItsOwn(t *testing.T) {
	t.Parallel()
	testForkedChild(t, anyPython(t), false)
}

func testForkedChild(t *testing.T, py string, py36 bool) {
	fake, _ := filepath.Abs("testdata/faketorch")
	j := newJob(t, InstallOptions{Interval: time.Hour, StepMaxHz: 100000}, nil)
	if err := j.run(t, py, []string{"PYTHONPATH=" + fake}, "testdata/forkchild.py"); err != nil {
		t.Fatalf("%v\nstderr: %s", err, j.stderr.String())
	}
	var parent, child int
	if _, err := fmt.Sscanf(j.stdout.String(), "parent %d child %d", &parent, &child); err != nil {
		t.Fatalf("stdout %q: %v", j.stdout.String(), err)
	}
	hellos := map[int]*Hello{}
	for _, m := range j.of(TypeHello) {
		hellos[m.Peer.PID] = m.Hello
	}
	p, c := hellos[parent], hellos[child]
	if len(hellos) != 2 || p == nil || c == nil || p.Child || !c.Child || c.PPID != parent {
		t.Fatalf("hellos %+v; want the parent %d and its forked child %d", hellos, parent, child)
	}
	steps := map[int]int64{}
	for _, m := range j.of(TypeStep) {
		steps[m.Peer.PID] = *m.Stats.Step
	}
	// The child inherits the parent's step count (1) and steps once; the
	// parent steps again after the child ended.
	if steps[child] != 2 || steps[parent] != 2 {
		t.Fatalf("last steps by pid %v; want 2 for both", steps)
	}
	var notices []string
	for _, m := range j.of(TypeNotice) {
		notices = append(notices, m.Notice.Text)
	}
	all := strings.Join(notices, "\n")
	if py36 != strings.Contains(all, "no os.register_at_fork") || py36 != strings.Contains(all, "no threading.excepthook") {
		t.Fatalf("degradation notices %q (Python 3.6: %v)", notices, py36)
	}
}
