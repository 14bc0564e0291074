package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func lintPython(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on PATH: torchmem lint needs Python 3.8+")
	}
	return p
}

// runLint runs torchmem lint with its host limits read from fixture roots:
// a 100-process limit for uid 1000, and a /dev/shm that is a plain directory.
func runLint(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	proc := t.TempDir()
	os.MkdirAll(filepath.Join(proc, "self"), 0o755)
	os.WriteFile(filepath.Join(proc, "self", "limits"),
		[]byte("Limit  Soft Limit  Hard Limit  Units\nMax processes             100                  100                  processes\n"), 0o644)
	os.WriteFile(filepath.Join(proc, "self", "status"), []byte("Name:\tpython3\nUid:\t1000\t1000\t1000\t1000\n"), 0o644)
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "dev", "shm"), 0o755)
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, ProcRoot: proc, SysRoot: "/sys", Root: root}
	code := Run(env, append([]string{"lint"}, args...))
	return out.String(), errb.String(), code
}

func writeScript(t *testing.T, name, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// lintBad is a DDP script: TM011 reports torch.load only in multi-process
// jobs (and CPU inference).
const lintBad = `import torch
from torch.utils.data import DataLoader
import torch.distributed as dist
state = torch.load("ckpt.pt")
loader = DataLoader(range(8), num_workers=64)
`

func TestLintTextAndExitCodes(t *testing.T) {
	py := lintPython(t)
	bad := writeScript(t, "train.py", lintBad)
	out, errs, code := runLint(t, "--python", py, bad)
	if code != 1 {
		t.Fatalf("findings: exit %d, want 1 (stderr %q)", code, errs)
	}
	if !strings.Contains(out, bad+":4:9: TM011 ") || !strings.Contains(out, "    fix: pass `map_location") {
		t.Errorf("text output:\n%s", out)
	}
	if !strings.Contains(out, ":5:10: TM013 num_workers=64 needs about 128 tasks but this host's process limit (ulimit -u) is 100") {
		t.Errorf("TM013 from the injected limits missing:\n%s", out)
	}
	clean := writeScript(t, "ok.py", "import torch\nstate = torch.load('c.pt', map_location='cpu')\n")
	if out, errs, code := runLint(t, "--python", py, clean); code != 0 || out != "" {
		t.Errorf("clean: exit %d out %q err %q", code, out, errs)
	}
	_, errs, code = runLint(t, "--python", "/nonexistent/python3", clean)
	if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "Python") {
		t.Errorf("no python: exit %d stderr %q", code, errs)
	}
	if _, _, code := runLint(t, "--python", py, "--format", "xml", clean); code != 2 {
		t.Errorf("bad --format: exit %d", code)
	}
}

func TestLintJSONAndSARIF(t *testing.T) {
	py := lintPython(t)
	bad := writeScript(t, "train.py", lintBad)
	out, _, code := runLint(t, "--python", py, "--json", "--no-host", bad)
	var fs []map[string]any
	if err := json.Unmarshal([]byte(out), &fs); err != nil || code != 1 {
		t.Fatalf("json: exit %d err %v\n%s", code, err, out)
	}
	if len(fs) != 1 || fs[0]["rule"] != "TM011" || fs[0]["line"] != float64(4) || fs[0]["col"] != float64(9) ||
		fs[0]["file"] != bad || fs[0]["fix"] == "" || fs[0]["message"] == "" {
		t.Errorf("json findings: %v", fs)
	}
	clean := writeScript(t, "ok.py", "x = 1\n")
	if out, _, code := runLint(t, "--python", py, "--json", clean); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("clean json: exit %d out %q", code, out)
	}
	out, _, code = runLint(t, "--python", py, "--format", "sarif", "--no-host", bad)
	var log struct {
		Version string
		Runs    []struct{ Results []struct{ RuleID string } }
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil || code != 1 || log.Version != "2.1.0" ||
		len(log.Runs) != 1 || len(log.Runs[0].Results) != 1 || log.Runs[0].Results[0].RuleID != "TM011" {
		t.Errorf("sarif: exit %d err %v\n%s", code, err, out)
	}
	if alias, _, code := runLint(t, "--python", py, "--sarif", "--no-host", bad); code != 1 || alias != out {
		t.Errorf("--sarif is not --format sarif: exit %d\n%s", code, alias)
	}
	if _, _, code := runLint(t, "--python", py, "--sarif", "--json", bad); code != 2 {
		t.Errorf("--sarif --json: exit %d, want 2", code)
	}
}

func TestLintSuppressionConfigAndSyntaxError(t *testing.T) {
	py := lintPython(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "pyproject.toml"), []byte("[tool.torchmem]\ndisable = [\"TM013\"]\nseverity = { TM011 = \"error\" }\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "src"), 0o755)
	os.WriteFile(filepath.Join(dir, "src", "a.py"), []byte(lintBad+"s2 = torch.load('x')  # torchmem: ignore[TM011]\ns3 = torch.load('y')  # torchmem: ignore\ns4 = torch.load('z')  # noqa: E501, TM011\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "src", "broken.py"), []byte("def f(:\n    pass\n"), 0o644)
	out, _, code := runLint(t, "--python", py, dir)
	if code != 1 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var rules []string
	for _, l := range lines {
		if !strings.HasPrefix(l, "    ") {
			rules = append(rules, l)
		}
	}
	if len(rules) != 2 || !strings.Contains(rules[0], "a.py:4:9: TM011") || !strings.Contains(rules[0], "[error]") ||
		!strings.Contains(rules[1], "broken.py:1:7: TM000 syntax error") {
		t.Errorf("got:\n%s", out)
	}
}

// --torch-version picks the fixes; a bad value is a usage error.
func TestLintTorchVersion(t *testing.T) {
	py := lintPython(t)
	script := writeScript(t, "train.py", "import torch\nfrom torch.cuda.amp import GradScaler, autocast\nscaler = GradScaler()\nctx = autocast()\n")
	out, _, code := runLint(t, "--python", py, "--no-host", "--torch-version", "1.13", script)
	if code != 1 || strings.Count(out, "TM009") != 1 || !strings.Contains(out, "keep `torch.cuda.amp.GradScaler()`") {
		t.Errorf("1.13: exit %d\n%s", code, out)
	}
	out, _, code = runLint(t, "--python", py, "--no-host", "--torch-version", "2.4", script)
	if code != 1 || strings.Count(out, "TM009") != 2 {
		t.Errorf("2.4: exit %d\n%s", code, out)
	}
	if _, errs, code := runLint(t, "--python", py, "--torch-version", "latest", script); code != 2 || !strings.Contains(errs, "--torch-version") {
		t.Errorf("bad version: exit %d %q", code, errs)
	}
}

func TestLintListRules(t *testing.T) {
	out, _, code := runLint(t, "--list-rules")
	if code != 0 || !strings.Contains(out, "TM002") || !strings.Contains(out, "accumulated-autograd-history") {
		t.Fatalf("list-rules: exit %d\n%s", code, out)
	}
	out, _, code = runLint(t, "--list-rules", "--json")
	var rules []map[string]any
	if err := json.Unmarshal([]byte(out), &rules); err != nil || code != 0 || len(rules) < 15 || rules[1]["id"] != "TM001" {
		t.Fatalf("list-rules json: exit %d err %v", code, err)
	}
	if _, _, code := runLint(t); code != 2 {
		t.Fatalf("no paths: exit %d, want 2", code)
	}
	if _, errs, code := runLint(t, "--bogus", "x.py"); code != 2 || !strings.Contains(errs, "bogus") {
		t.Fatalf("bad flag: exit %d stderr %q, want 2", code, errs)
	}
}
