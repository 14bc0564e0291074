package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func tuneTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	src := "../doctor/testdata/centos7"
	for _, m := range [][2]string{{"proc", "proc"}, {"sys", "sys"}, {"root/etc", "etc"}} {
		if out, err := exec.Command("cp", "-a", filepath.Join(src, m[0]), filepath.Join(root, m[1])).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v %s", err, out)
		}
	}
	return root
}

func TestTuneCLIRoundTrip(t *testing.T) {
	root := tuneTree(t)
	read := func(rel string) string { b, _ := os.ReadFile(filepath.Join(root, rel)); return string(b) }
	out, _, code := runCLI(t, "tune", "plan", "--root", root)
	if code != 0 || !strings.Contains(out, "vm.swappiness") || !strings.Contains(out, "write /etc/sysctl.d/90-torchmem.conf") {
		t.Fatalf("plan: %d\n%s", code, out)
	}
	// Not a terminal and no --yes: refused, nothing written.
	_, errOut, code := runCLI(t, "tune", "apply", "--root", root)
	if code != 1 || !strings.Contains(errOut, "--yes") || read("proc/sys/vm/swappiness") != "30\n" {
		t.Fatalf("apply without --yes: %d %q", code, errOut)
	}
	if _, errOut, code = runCLI(t, "tune", "apply", "--root", root, "--yes"); code != 0 {
		t.Fatalf("apply: %d %s", code, errOut)
	}
	if read("proc/sys/vm/swappiness") != "10\n" {
		t.Errorf("swappiness not applied: %q", read("proc/sys/vm/swappiness"))
	}
	if out, _, code = runCLI(t, "tune", "status", "--root", root); code != 0 || !strings.Contains(out, "profile training applied") {
		t.Errorf("status: %d\n%s", code, out)
	}
	if err := os.WriteFile(filepath.Join(root, "proc/sys/vm/swappiness"), []byte("60\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, _, code = runCLI(t, "tune", "status", "--root", root); code != 1 || !strings.Contains(out, "DRIFTED") {
		t.Errorf("status after drift: %d\n%s", code, out)
	}
	if _, errOut, code = runCLI(t, "tune", "revert", "--root", root); code != 0 {
		t.Fatalf("revert: %d %s", code, errOut)
	}
	if read("proc/sys/vm/swappiness") != "30\n" || read("etc/sysctl.d/90-torchmem.conf") != "" {
		t.Errorf("revert left swappiness %q", read("proc/sys/vm/swappiness"))
	}
	if out, _, code = runCLI(t, "tune", "status", "--root", root); code != 0 || !strings.Contains(out, "nothing applied") {
		t.Errorf("status after revert: %d %s", code, out)
	}
	if _, errOut, code = runCLI(t, "tune", "drop-caches", "--root", root); code != 1 || !strings.Contains(errOut, "warning") {
		t.Errorf("drop-caches without --yes: %d %s", code, errOut)
	}
	// A dry run says nothing was dropped, and writes nothing.
	dc := filepath.Join(root, "proc/sys/vm/drop_caches")
	if err := os.WriteFile(dc, []byte("0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code = runCLI(t, "tune", "drop-caches", "--dry-run", "--root", root); code != 0 ||
		!strings.Contains(out, "nothing was dropped") || strings.Contains(out, "caches dropped") || read("proc/sys/vm/drop_caches") != "0\n" {
		t.Errorf("drop-caches --dry-run: %d %q %s, file %q", code, out, errOut, read("proc/sys/vm/drop_caches"))
	}
}

// Stdin from /dev/null (cron, ssh -n) is a character device but no
// terminal: apply must refuse without --yes, not read a silent "no" and
// exit 0. And status fits 80 columns.
func TestTuneApplyNoTerminalAndStatusWidth(t *testing.T) {
	root := tuneTree(t)
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	saved := os.Stdin
	os.Stdin = null
	defer func() { os.Stdin = saved }()
	var out, errb bytes.Buffer
	env := DefaultEnv()
	env.Stdout, env.Stderr, env.Stdin = &out, &errb, null
	if code := Run(env, []string{"tune", "apply", "--root", root}); code != 1 || !strings.Contains(errb.String(), "--yes") {
		t.Errorf("apply with stdin /dev/null: exit %d, stderr %q", code, errb.String())
	}
	if _, errOut, code := runCLI(t, "tune", "apply", "--root", root, "--yes"); code != 0 {
		t.Fatalf("apply: %d %s", code, errOut)
	}
	st, _, _ := runCLI(t, "tune", "status", "--root", root)
	for _, l := range strings.Split(st, "\n")[1:] { // the first line holds the journal path
		if len(l) > 80 {
			t.Errorf("status line wider than 80: %q", l)
		}
	}
	if !strings.Contains(st, "FILE") || !strings.Contains(st, "/etc/sysctl.d/90-torchmem.conf") {
		t.Errorf("status:\n%s", st)
	}
}
