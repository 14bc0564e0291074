// Package packaging_test builds the real DEB and RPM with scripts/package.sh
// and checks them with the distributions' own tools: `rpm -qpl` for the RPM
// file list, `dpkg -i` + `torchmem --version` + `dpkg -r` for the DEB.
package packaging_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var wantFiles = []string{
	"/usr/bin/torchmem",
	"/usr/lib/systemd/system/torchmem.service",
	"/usr/share/man/man1/torchmem.1.gz",
	"/usr/share/man/man1/torchmem-completion.1.gz",
	"/usr/share/bash-completion/completions/torchmem",
	"/usr/share/zsh/vendor-completions/_torchmem",
	"/usr/share/fish/vendor_completions.d/torchmem.fish",
	"/usr/share/doc/torchmem/examples/90-torchmem-sysctl.conf",
	"/var/lib/torchmem",
}

func buildPackages(t *testing.T) (deb, rpm string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds packages; skipped in -short")
	}
	out := t.TempDir()
	cmd := exec.Command("bash", "../scripts/package.sh", out)
	cmd.Env = append(os.Environ(), "VERSION=1.2.3")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("package.sh: %v\n%s", err, b)
	}
	debs, _ := filepath.Glob(filepath.Join(out, "*.deb"))
	rpms, _ := filepath.Glob(filepath.Join(out, "*.rpm"))
	if len(debs) != 1 || len(rpms) != 1 {
		t.Fatalf("want one deb and one rpm, got %v %v", debs, rpms)
	}
	return debs[0], rpms[0]
}

func TestPackages(t *testing.T) {
	deb, rpm := buildPackages(t)
	t.Run("rpm file list", func(t *testing.T) {
		if _, err := exec.LookPath("rpm"); err != nil {
			t.Skip("rpm not installed (Debian package rpm)")
		}
		b, err := exec.Command("rpm", "-qpl", rpm).CombinedOutput()
		if err != nil {
			t.Fatalf("rpm -qpl: %v\n%s", err, b)
		}
		list := string(b)
		for _, f := range wantFiles {
			if !strings.Contains(list, f+"\n") {
				t.Errorf("rpm lacks %s; has:\n%s", f, list)
			}
		}
	})
	t.Run("deb install", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("dpkg -i needs root")
		}
		if _, err := exec.LookPath("dpkg"); err != nil {
			t.Skip("not a dpkg system")
		}
		if b, err := exec.Command("dpkg", "-i", deb).CombinedOutput(); err != nil {
			t.Fatalf("dpkg -i: %v\n%s", err, b)
		}
		defer exec.Command("dpkg", "-P", "torchmem").Run()
		b, err := exec.Command("/usr/bin/torchmem", "--version").CombinedOutput()
		if err != nil || !strings.Contains(string(b), "1.2.3") {
			t.Fatalf("installed torchmem --version: %v %q", err, b)
		}
	})
}
