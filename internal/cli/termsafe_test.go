package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/hook"
	"github.com/torchmem/torchmem/internal/store"
	"github.com/torchmem/torchmem/internal/supervisor"
)

// hostile is what a job or a log can hold to take over the terminal that
// prints it: an OSC title, clear screen, a C1 CSI, a carriage return
// that overwrites the line, backspaces, and a bidi override.
const hostile = "\x1b]0;pwned\x07\x1b[2J\u009b31m\rFAKE\b\b\u202eexe"

// hostileShown is hostile as torchmem must show it.
const hostileShown = `\x1b]0;pwned\x07\x1b[2J\u009b31m\rFAKE\x08\x08\u202eexe`

// rawControls reports the control characters left in terminal output
// (newlines and tabs aside) and whether hostile shows escaped in it.
func rawControls(out string) string {
	var found []string
	for _, r := range out {
		if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r < 0xa0) || (r >= 0x202a && r <= 0x202e) {
			found = append(found, fmt.Sprintf("%U", r))
		}
	}
	return fmt.Sprintf("raw controls %v, escaped form shown %v", found, strings.Contains(out, hostileShown))
}

// termsafeDB records a run whose command, cwd, labels, events and
// post-mortem hold hostile text, as a hooked job can make them.
func termsafeDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "h.db")
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Add(-time.Minute)
	r := &store.Run{Command: []string{"python3", "train.py", hostile}, Cwd: "/tmp/" + hostile, Start: t0,
		Labels: map[string]string{"SLURM_JOB_NAME": hostile}}
	if err := db.CreateRun(r); err != nil {
		t.Fatal(err)
	}
	db.AppendEvent(r.ID, store.Event{Time: t0.Add(time.Second), Kind: "exception", Source: "hook", Message: "RuntimeError: " + hostile})
	sum := supervisor.Summary{ExitCode: 1, Cause: supervisor.CauseExitCode, Verdict: "exited with status 1 after an uncaught RuntimeError: " + hostile,
		Exception: "RuntimeError: " + hostile, KernelLines: []string{"Killed process 4242 (" + hostile + ")"},
		CUDAOOM: &hook.OOM{Snapshot: "/var/lib/torchmem/snapshots/" + hostile + ".pickle"}}
	raw, _ := json.Marshal(sum)
	code := 1
	if err := db.FinishRun(r.ID, store.Finish{End: t0.Add(2 * time.Second), Status: store.StatusExited, ExitCode: &code, Summary: raw}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReliabilityJobTextEscaped: show and runs print the job's text with
// its control characters escaped; --json keeps the text (JSON escapes it).
func TestReliabilityJobTextEscaped(t *testing.T) {
	db := termsafeDB(t)
	want := "raw controls [], escaped form shown true"
	for _, args := range [][]string{{"show", "last"}, {"runs", "--wide"}} {
		out, errs, code := runCLI(t, append(args, "--db", db)...)
		got := rawControls(out)
		t.Logf("RELIABILITY|%s|%s|%s", "job text in `torchmem "+strings.Join(args, " ")+"`", want, got)
		if code != 0 || got != want {
			t.Errorf("%v: code %d (%s), %s:\n%s", args, code, errs, got, out)
		}
	}
	out, _, _ := runCLI(t, "show", "last", "--json", "--db", db)
	var v struct{ Run struct{ Command []string } }
	if err := json.Unmarshal([]byte(out), &v); err != nil || len(v.Run.Command) != 3 || v.Run.Command[2] != hostile {
		t.Errorf("show --json changed the command: %q, %v", v.Run.Command, err)
	}
}

// TestReliabilityOOMTextEscaped: the text oom prints from a log (a process
// name, the log's own file name) comes out escaped.
func TestReliabilityOOMTextEscaped(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(oomTestdata, "kernel/local-v1-6.18.dmesg-T"))
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "train"+hostile+".log")
	if err := os.WriteFile(log, []byte(strings.ReplaceAll(string(b), "(python3)", "(py"+hostile+")")), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := oomRun(t, "", log)
	got := rawControls(out)
	want := "raw controls [], escaped form shown true"
	t.Logf("RELIABILITY|%s|%s|%s", "log text in `torchmem oom FILE`", want, got)
	if code != 0 || got != want {
		t.Errorf("code %d (%s), %s:\n%s", code, errs, got, out)
	}
}

// TestReliabilityRunSummaryEscaped: a real `torchmem run` of a Python job
// that dies with hostile text in its exception and command line: the
// summary torchmem prints and `show` print it escaped. Python's own
// traceback on the job's stderr is the job's business and stays raw.
func TestReliabilityRunSummaryEscaped(t *testing.T) {
	if testing.Short() {
		t.Skip("builds torchmem and runs a job")
	}
	py, env := termsafePython(t)
	dir := t.TempDir()
	bin, db := runBuild(t, dir), filepath.Join(dir, "h.db")
	job := filepath.Join(dir, "job.py")
	os.WriteFile(job, []byte("import sys, torch\nraise RuntimeError(sys.argv[1])\n"), 0o644)
	cmd := exec.Command(bin, "run", "--no-cgroup", "--db", db, "--", py, job, hostile)
	cmd.Env = append(os.Environ(), env...)
	out, _ := cmd.CombinedOutput()
	var summary []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "torchmem: run ") || strings.HasPrefix(l, "  exception: ") {
			summary = append(summary, l)
		}
	}
	got := rawControls(strings.Join(summary, "\n"))
	want := "raw controls [], escaped form shown true"
	t.Logf("RELIABILITY|%s|%s|%s", "hook's exception text in the run summary", want, got)
	if len(summary) < 2 || got != want {
		t.Errorf("summary lines %q: %s\nwhole output:\n%q", summary, got, out)
	}
	show, err := exec.Command(bin, "show", "last", "--db", db).CombinedOutput()
	got = rawControls(string(show))
	t.Logf("RELIABILITY|%s|%s|%s", "the same run in `torchmem show`", want, got)
	if err != nil || got != want {
		t.Errorf("show: %v, %s:\n%s", err, got, show)
	}
}

// termsafePython is python3 with PyTorch, or with a stand-in torch module
// (the hook only waits for `import torch`; its exception hook needs no
// more of torch than a version).
func termsafePython(t *testing.T) (string, []string) {
	if py := runTorchPython(); py != "" {
		return py, nil
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	stub := filepath.Join(t.TempDir(), "stub")
	os.MkdirAll(filepath.Join(stub, "torch"), 0o755)
	os.WriteFile(filepath.Join(stub, "torch", "__init__.py"), []byte("__version__ = '0.0+torchmem-test-stub'\n"), 0o644)
	return py, []string{"PYTHONPATH=" + stub}
}

// TestReliabilitySnapshotTextEscaped: a snapshot's frame file names are
// the file's to choose; snapshot top prints them escaped.
func TestReliabilitySnapshotTextEscaped(t *testing.T) {
	b, err := os.ReadFile("../snapshot/testdata/formats/torch-1.13.pickle")
	if err != nil {
		t.Fatal(err)
	}
	// Same length, so the pickle's length prefixes still hold.
	const user, evil = "/home/user/train.py", "\x1b]0;pwned\x07\x1b[2J\rX.py"
	if len(user) != len(evil) || !strings.Contains(string(b), user) {
		t.Fatal("fixture changed: no /home/user/train.py frame")
	}
	p := filepath.Join(t.TempDir(), "evil.pickle")
	os.WriteFile(p, []byte(strings.ReplaceAll(string(b), user, evil)), 0o644)
	out, errs, code := runCLI(t, "snapshot", "top", p)
	raw := strings.ContainsAny(out, "\x1b\x07\r")
	shown := strings.Contains(out, `\x1b]0;pwned\x07\x1b[2J\rX.py`)
	t.Logf("RELIABILITY|%s|%s|%s", "frame file names in `torchmem snapshot top`", "escaped", fmt.Sprintf("raw %v, escaped form shown %v", raw, shown))
	if code != 0 || raw || !shown {
		t.Errorf("code %d (%s), raw %v, shown %v:\n%s", code, errs, raw, shown, out)
	}
}
