package packaging_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRPMScriptletsByCount runs each RPM scriptlet with sh and the $1 rpm
// passes (how many torchmem packages there are after the step), against
// stand-in systemctl/tuned-adm on PATH: install, upgrade and erase each do
// what the %systemd_* macros do. No root or rpm needed (the scratch-root
// test runs them under rpm itself).
func TestRPMScriptletsByCount(t *testing.T) {
	bin := t.TempDir()
	log := filepath.Join(bin, "calls.log")
	for _, tool := range []string{"systemctl", "tuned-adm"} {
		script := "#!/bin/sh\necho \"" + tool + " $*\" >>" + log + "\n"
		if err := os.WriteFile(filepath.Join(bin, tool), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		script, arg, want string
	}{
		{"rpm-post.sh", "1", "systemctl --no-reload preset torchmem.service\nsystemctl daemon-reload\n"},
		{"rpm-post.sh", "2", "systemctl daemon-reload\n"},
		{"rpm-preun.sh", "0", "systemctl --no-reload disable torchmem.service\nsystemctl stop torchmem.service\n"},
		{"rpm-preun.sh", "1", ""},
		{"rpm-postun.sh", "0", "systemctl daemon-reload\n"},
		{"rpm-postun.sh", "1", "systemctl daemon-reload\nsystemctl try-restart torchmem.service\n"},
		{"rpm-postun.sh", "2", "systemctl daemon-reload\nsystemctl try-restart torchmem.service\n"},
	}
	for _, c := range cases {
		os.Remove(log)
		cmd := exec.Command("sh", filepath.Join("scripts", c.script), c.arg)
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
		if out, err := cmd.CombinedOutput(); err != nil || len(out) != 0 {
			t.Errorf("%s %s: %v %q (scriptlets must exit 0 and print nothing)", c.script, c.arg, err, out)
		}
		got, _ := os.ReadFile(log)
		if string(got) != c.want {
			t.Errorf("%s %s: %q, want %q", c.script, c.arg, got, c.want)
		}
	}
}

// TestScriptletsFailSoft: with systemctl failing (no systemd: a container
// or chroot), every scriptlet still exits 0, as the macros' `|| :` do.
func TestScriptletsFailSoft(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "systemctl"), []byte("#!/bin/sh\necho 'System has not been booted with systemd' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	scripts, _ := filepath.Glob("scripts/*.sh")
	if len(scripts) != 6 {
		t.Fatalf("scripts %v", scripts)
	}
	for _, s := range scripts {
		for _, arg := range []string{"0", "1", "2", "configure", "remove", "upgrade", "purge"} {
			cmd := exec.Command("sh", s, arg)
			cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "" {
				t.Errorf("%s %s: %v %q", s, arg, err, out)
			}
		}
	}
}
