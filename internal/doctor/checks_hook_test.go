package doctor

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/gpu"
)

// hookProbeAnswers are hookProbeScript's real output on this project's
// build machine (2026-12-01), by interpreter: pyenv's CPython 2.7.18,
// 3.6.15, 3.7.16, 3.8.18, 3.9.18, 3.10.13, 3.12.1, 3.13.0 and Debian 12's
// /usr/bin/python3 3.11.2. The fixture hosts' probes answer with the one of
// their Python's minor version (CentOS 7's 3.6.8 gets 3.6.15's: the hook
// looks APIs up, and no 3.6 point release added one).
var hookProbeAnswers = map[string]string{
	"2.7":  `{"python": "2.7.18", "loads": false, "min_python": [3, 6], "degraded": ["no os.register_at_fork (Python 3.7+): a forked child takes over the connection at its first hook call, not at the fork; a forked child that never imports or uses torch is not reported", "no threading.excepthook (Python 3.8+): uncaught exceptions in threads other than the main thread are not reported"]}`,
	"3.6":  `{"python": "3.6.15", "min_python": [3, 6], "loads": true, "degraded": ["no os.register_at_fork (Python 3.7+): a forked child takes over the connection at its first hook call, not at the fork; a forked child that never imports or uses torch is not reported", "no threading.excepthook (Python 3.8+): uncaught exceptions in threads other than the main thread are not reported"]}`,
	"3.7":  `{"python": "3.7.16", "min_python": [3, 6], "loads": true, "degraded": ["no threading.excepthook (Python 3.8+): uncaught exceptions in threads other than the main thread are not reported"]}`,
	"3.8":  `{"python": "3.8.18", "min_python": [3, 6], "loads": true, "degraded": []}`,
	"3.9":  `{"python": "3.9.18", "min_python": [3, 6], "loads": true, "degraded": []}`,
	"3.10": `{"python": "3.10.13", "min_python": [3, 6], "loads": true, "degraded": []}`,
	"3.11": `{"python": "3.11.2", "min_python": [3, 6], "loads": true, "degraded": []}`,
	"3.12": `{"python": "3.12.1", "min_python": [3, 6], "loads": true, "degraded": []}`,
	"3.13": `{"python": "3.13.0", "min_python": [3, 6], "loads": true, "degraded": []}`,
}

// isHookProbe tells doctor's hook import probe from its version probe.
func isHookProbe(args []string) bool {
	return len(args) == 5 && args[2] == "-c" && strings.Contains(args[3], "torchmem_hook")
}

// recordedHookProbe answers the hook probe for the interpreter whose
// version probe answered versionJS.
func recordedHookProbe(versionJS string) ([]byte, error) {
	var p struct{ Python string }
	json.Unmarshal([]byte(versionJS), &p)
	v := version(p.Python)
	if len(v) >= 2 {
		if a, ok := hookProbeAnswers[dotted(v[:2])]; ok {
			return []byte(a + "\n"), nil
		}
	}
	return nil, &exec.ExitError{}
}

func hookFinding(t *testing.T, h *Host) Finding {
	t.Helper()
	fs := checkHook(h)
	if len(fs) != 1 {
		t.Fatalf("findings %+v", fs)
	}
	return fs[0]
}

func evidence(f Finding) string {
	var b strings.Builder
	for _, e := range f.Evidence {
		b.WriteString(e.Source + ": " + e.Value + "\n")
	}
	return b.String()
}

func TestHookCheckByInterpreter(t *testing.T) {
	cases := []struct {
		python, torch string
		sev           Severity
		title, ev     string
	}{
		{"2.7.18", "1.4.0", Warn, "cannot load under Python 2.7.18 (needs 3.6+)", "the hook arms only on Python 3.6+"},
		{"3.6.8", "1.10.2+cu113", Info, "runs under python3 (Python 3.6.8, torch 1.10.2+cu113), degraded", "no os.register_at_fork"},
		{"3.7.9", "1.13.1", Info, "degraded", "no threading.excepthook"},
		{"3.8.10", "1.8.1", Warn, "torch 1.8.1 is older than the hook supports", "loads; nothing degraded"},
		{"3.11.2", "2.1.0", OK, "can run under python3 (Python 3.11.2, torch 2.1.0)", "loads; nothing degraded"},
	}
	for _, c := range cases {
		h := fixtureHost("debian12")
		h.Run = pythonSays(`{"python": "` + c.python + `", "torch": "` + c.torch + `"}`)
		f := hookFinding(t, h)
		if f.Severity != c.sev || !strings.Contains(f.Title, c.title) || !strings.Contains(evidence(f), c.ev) {
			t.Errorf("%s: %s %q\n%s", c.python, f.Severity, f.Title, evidence(f))
		}
		if c.sev == Warn && c.python == "2.7.18" && strings.Contains(evidence(f), "torchmem_hook._common.degraded():") {
			t.Errorf("%s: degradations listed for an interpreter the hook does not arm on", c.python)
		}
	}
}

func TestHookCheckImportFailsOrProbeCannotRun(t *testing.T) {
	versions := `{"python": "3.9.2", "torch": "2.0.1", "executable": "/opt/py/bin/python3"}`
	h := fixtureHost("debian12")
	h.Run = func(ctx context.Context, name string, args ...string) ([]byte, error) {
		if isHookProbe(args) {
			return []byte(`{"python": "3.9.2", "error": "ModuleNotFoundError: No module named 'select'"}` + "\n"), nil
		}
		return pythonSays(versions)(ctx, name, args...)
	}
	f := hookFinding(t, h)
	if f.Severity != Warn || f.Title != "the torchmem hook fails to import under /opt/py/bin/python3" || !strings.Contains(evidence(f), "No module named 'select'") {
		t.Errorf("%s %q\n%s", f.Severity, f.Title, evidence(f))
	}
	// A probe that cannot run (timeout): the version decides, and the
	// evidence says the probe did not run.
	h = fixtureHost("debian12")
	h.Run = func(ctx context.Context, name string, args ...string) ([]byte, error) {
		if isHookProbe(args) {
			return nil, context.DeadlineExceeded
		}
		return pythonSays(versions)(ctx, name, args...)
	}
	f = hookFinding(t, h)
	if f.Severity != OK || !strings.Contains(evidence(f), "probe did not run: context deadline exceeded") {
		t.Errorf("%s %q\n%s", f.Severity, f.Title, evidence(f))
	}
}

// TestHookProbeRealInterpreters runs the probe for real: the default
// python3, and a Python 3.6 (TORCHMEM_PY36, pyenv's 3.6.*, or python3.6 on
// PATH) when there is one. The version probe's answer is recorded (neither
// has torch here); the hook import is the interpreter's own.
func TestHookProbeRealInterpreters(t *testing.T) {
	if testing.Short() {
		t.Skip("runs interpreters")
	}
	pys := map[string]string{}
	if p, err := exec.LookPath("python3"); err == nil {
		pys["python3"] = p
	}
	if p := findPython36(); p != "" {
		pys["3.6"] = p
	} else {
		t.Log("no Python 3.6 interpreter: set TORCHMEM_PY36 to probe one")
	}
	if len(pys) == 0 {
		t.Skip("no python3")
	}
	for name, py := range pys {
		t.Run(name, func(t *testing.T) {
			out, err := exec.Command(py, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])").Output()
			if err != nil {
				t.Fatal(err)
			}
			ver := strings.TrimSpace(string(out))
			h := fixtureHost("debian12")
			h.Python = py
			h.Run = func(ctx context.Context, name string, args ...string) ([]byte, error) {
				if isHookProbe(args) {
					return gpu.ExecRunner(ctx, name, args...)
				}
				return pythonSays(`{"python": "`+ver+`", "torch": "2.1.0", "executable": "`+py+`"}`)(ctx, name, args...)
			}
			f := hookFinding(t, h)
			degraded := versionLess(version(ver), []int{3, 8})
			want := OK
			if degraded {
				want = Info
			}
			if f.Severity != want || !strings.Contains(f.Title, py) || !strings.Contains(evidence(f), "loads;") {
				t.Errorf("%s: %s %q\n%s", ver, f.Severity, f.Title, evidence(f))
			}
			t.Logf("%s (%s): %s\n%s", py, ver, f.Title, evidence(f))
		})
	}
}

// findPython36 is internal/hook's python36 finder (a test helper cannot be shared).
func findPython36() string {
	if p := os.Getenv("TORCHMEM_PY36"); p != "" {
		return p
	}
	root := os.Getenv("PYENV_ROOT")
	if root == "" {
		if home, err := os.UserHomeDir(); err == nil {
			root = filepath.Join(home, ".pyenv")
		}
	}
	if m, _ := filepath.Glob(filepath.Join(root, "versions", "3.6.*", "bin", "python3.6")); root != "" && len(m) > 0 {
		sort.Strings(m)
		return m[len(m)-1]
	}
	if p, err := exec.LookPath("python3.6"); err == nil {
		return p
	}
	return ""
}
