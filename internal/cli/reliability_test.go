package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// reliability logs the line bench/reliability.sh turns into a table row.
func reliability(t *testing.T, check, expected, observed string) {
	t.Helper()
	t.Logf("RELIABILITY|%s|%s|%s", check, expected, observed)
}

// reliabilityBuild builds torchmem into a directory every user can read
// (some checks run it as nobody).
func reliabilityBuild(t *testing.T) (bin, dir string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs a real torchmem")
	}
	dir = t.TempDir()
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		_ = os.Chmod(d, 0o755)
	}
	return runBuild(t, dir), dir
}

// execCase is one file that a shell and torchmem are asked to run.
type execCase struct {
	name, cmd string
	setup     func(dir string) error
	nobody    bool // run as uid 65534 (root may search any directory)
}

func writeExec(path, body string, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		return err
	}
	return os.Chmod(path, mode)
}

var execCases = []execCase{
	{"ok script", "./ok", func(d string) error { return writeExec(d+"/ok", "#!/bin/sh\nexit 4\n", 0o755) }, false},
	{"not found in PATH", "torchmem-no-such-command", nil, false},
	{"no such file", "./missing", nil, false},
	{"not executable", "./noexec", func(d string) error { return writeExec(d+"/noexec", "#!/bin/sh\nexit 5\n", 0o644) }, false},
	{"directory", "./adir", func(d string) error { return os.MkdirAll(d+"/adir", 0o755) }, false},
	{"bad interpreter", "./badinterp", func(d string) error { return writeExec(d+"/badinterp", "#!/nonexistent/python3\nprint(1)\n", 0o755) }, false},
	{"ENOEXEC binary garbage", "./garbage", func(d string) error { return writeExec(d+"/garbage", "\x01\x02\x00garbage\xff\n", 0o755) }, false},
	{"ENOEXEC ELF of no arch", "./elf", func(d string) error { return writeExec(d+"/elf", "\x7fELF\x09\x09\x09garbage", 0o755) }, false},
	{"ENOEXEC text, no #!", "./text", func(d string) error { return writeExec(d+"/text", "exit 6\n", 0o755) }, false},
	{"ENOEXEC empty file", "./empty", func(d string) error { return writeExec(d+"/empty", "", 0o755) }, false},
	{"path component not a directory", "./ok/x", func(d string) error { return writeExec(d+"/ok", "#!/bin/sh\nexit 4\n", 0o755) }, false},
	{"permission denied on a path component", "./locked/ok", func(d string) error {
		if err := writeExec(d+"/locked/ok", "#!/bin/sh\nexit 4\n", 0o755); err != nil {
			return err
		}
		return os.Chmod(d+"/locked", 0o700)
	}, true},
}

// runAs runs argv in dir, as nobody when asked, and returns bash's view of
// its status (128+signal for a signal).
func runAs(dir string, nobody bool, argv ...string) (int, string) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	var e bytes.Buffer
	cmd.Stderr = &e
	if nobody {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		if ws := ee.Sys().(syscall.WaitStatus); ws.Signaled() {
			return 128 + int(ws.Signal()), e.String()
		}
		return ee.ExitCode(), e.String()
	}
	if err != nil {
		return -1, err.Error()
	}
	return 0, e.String()
}

func TestReliabilityExecStatusLikeBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to compare with")
	}
	bin, _ := reliabilityBuild(t)
	var rows []string
	for _, c := range execCases {
		if c.nobody && os.Geteuid() != 0 {
			continue
		}
		dir := t.TempDir()
		_ = os.Chmod(dir, 0o755)
		if c.setup != nil {
			if err := c.setup(dir); err != nil {
				t.Fatal(err)
			}
		}
		want, bashErr := runAs(dir, c.nobody, bash, "-c", c.cmd)
		got, tmErr := runAs(dir, c.nobody, bin, "run", "--no-history", "--no-hook", "--no-cgroup", "--", c.cmd)
		if got != want {
			t.Errorf("%s (%s): torchmem %d, bash %d\nbash: %storchmem: %s", c.name, c.cmd, got, want, bashErr, tmErr)
		}
		rows = append(rows, fmt.Sprintf("%s %d", c.name, got))
	}
	reliability(t, "exec failure exit codes", "same as bash for every case", "torchmem: "+strings.Join(rows, ", "))
}

func TestReliabilityMemoryMaxMinimum(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs a job cgroup (root) to apply --memory-max")
	}
	bin, _ := reliabilityBuild(t)
	var obs []string
	for _, lim := range []string{"1K", "0", "31M"} {
		code, stderr := runAs("/", false, bin, "run", "--no-history", "--memory-max", lim, "--", "/bin/true")
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code == 0 || len(lines) != 1 || !strings.Contains(stderr, "--memory-max "+lim+": below the minimum of 32.00 MiB") {
			t.Errorf("--memory-max %s: exit %d, stderr %q", lim, code, stderr)
		}
		obs = append(obs, fmt.Sprintf("%s refused (exit %d)", lim, code))
	}
	code, stderr := runAs("/", false, bin, "run", "--no-history", "--memory-max", "32M", "--", "/bin/true")
	if code != 0 {
		t.Errorf("--memory-max 32M: exit %d\n%s", code, stderr)
	}
	obs = append(obs, fmt.Sprintf("32M exit %d", code))
	code, stderr = runAs("/", false, bin, "run", "--no-history", "--memory-max", "1P", "--", "/bin/true")
	if code != 0 || !strings.Contains(stderr, "--memory-max 1P is above this host's memory (MemTotal") {
		t.Errorf("--memory-max 1P: exit %d, stderr %q", code, stderr)
	}
	obs = append(obs, fmt.Sprintf("1P warned, exit %d", code))
	reliability(t, "--memory-max minimum", "1K, 0, 31M refused in one line; 32M runs; 1P warns", strings.Join(obs, "; "))
}
