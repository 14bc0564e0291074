package packaging_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// scratchRoot makes a root for `rpm --root`: rpm runs the scriptlets
// chrooted there with /bin/sh, so it gets this machine's sh with the
// libraries it links, /dev/null, and stand-ins for systemctl and tuned-adm
// that append their arguments to /calls.log (tuned-adm recommend answers
// throughput-performance, what it says on an EL server).
func scratchRoot(t *testing.T) string {
	t.Helper()
	sh, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil {
		t.Skip("no /bin/sh")
	}
	root := t.TempDir()
	copyFile(t, sh, filepath.Join(root, "bin/sh"), 0o755)
	out, err := exec.Command("ldd", sh).Output()
	if err != nil {
		t.Skipf("ldd %s: %v", sh, err)
	}
	for _, f := range strings.Fields(string(out)) {
		if strings.HasPrefix(f, "/") {
			copyFile(t, f, filepath.Join(root, f), 0o755)
		}
	}
	os.MkdirAll(filepath.Join(root, "dev"), 0o755)
	if b, err := exec.Command("mknod", "-m", "666", filepath.Join(root, "dev/null"), "c", "1", "3").CombinedOutput(); err != nil {
		t.Skipf("mknod /dev/null: %v %s", err, b)
	}
	writeFile(t, filepath.Join(root, "usr/bin/systemctl"), "#!/bin/sh\necho \"systemctl $*\" >>/calls.log\n", 0o755)
	writeFile(t, filepath.Join(root, "usr/bin/tuned-adm"),
		"#!/bin/sh\necho \"tuned-adm $*\" >>/calls.log\n[ \"$1\" = recommend ] && echo throughput-performance\nexit 0\n", 0o755)
	return root
}

func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dst, string(b), mode)
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// calls returns and clears the stand-ins' log.
func calls(t *testing.T, root string) string {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(root, "calls.log"))
	os.Remove(filepath.Join(root, "calls.log"))
	return string(b)
}

// TestRPMInstallUpgradeEraseInScratchRoot installs the RPM into an empty
// root with rpm itself, upgrades it to a second build (1.2.4) and erases
// it, checking what lands and what the scriptlets ask of systemd at each
// step: the behaviour of %systemd_post, %systemd_preun and
// %systemd_postun_with_restart, with rpm passing the real $1.
func TestRPMInstallUpgradeEraseInScratchRoot(t *testing.T) {
	p := buildPackages(t)
	needTool(t, "rpm", "rpm")
	if os.Geteuid() != 0 {
		t.Skip("rpm --root chroots to run scriptlets: needs root")
	}
	root := scratchRoot(t)
	rpm := func(args ...string) string { return run(t, "rpm", append([]string{"--root", root}, args...)...) }
	rpm("--initdb")

	rpm("--nodeps", "-i", p.rpm)
	for _, f := range append(wantFiles, wantRPM...) {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("not installed: %v", err)
		}
	}
	if c := calls(t, root); c != "systemctl --no-reload preset torchmem.service\nsystemctl daemon-reload\n" {
		t.Errorf("install: %q; want preset (first install) and daemon-reload", c)
	}

	// The admin's edit must survive the upgrade (config noreplace).
	conf := filepath.Join(root, "etc/sysconfig/torchmem")
	edited := `TORCHMEM_SERVE_OPTS="--interval 5s"` + "\n"
	writeFile(t, conf, edited, 0o644)
	rpm("--nodeps", "-U", secondBuild(t, p, "1.2.4"))
	// New %post ($1=2): no preset; old %preun ($1=1): nothing; old
	// %postun ($1=1): daemon-reload and try-restart.
	if c := calls(t, root); c != "systemctl daemon-reload\nsystemctl daemon-reload\nsystemctl try-restart torchmem.service\n" {
		t.Errorf("upgrade: %q", c)
	}
	if b, _ := os.ReadFile(conf); string(b) != edited {
		t.Errorf("upgrade replaced the edited %s: %q", conf, b)
	}
	if q := rpm("-q", "torchmem"); !strings.HasPrefix(q, "torchmem-1.2.4-1") {
		t.Errorf("after upgrade: %q", q)
	}

	// Erase with the packaged tuned profile active: back to tuned's
	// recommendation.
	writeFile(t, filepath.Join(root, "etc/tuned/active_profile"), "torchmem-training\n", 0o644)
	rpm("-e", "torchmem")
	want := "systemctl --no-reload disable torchmem.service\nsystemctl stop torchmem.service\n" +
		"tuned-adm recommend\ntuned-adm profile throughput-performance\nsystemctl daemon-reload\n"
	if c := calls(t, root); c != want {
		t.Errorf("erase: %q, want %q", c, want)
	}
	for _, f := range []string{"usr/bin/torchmem", "usr/lib/systemd/system/torchmem.service", "usr/lib/tuned/torchmem-training"} {
		if _, err := os.Stat(filepath.Join(root, f)); err == nil {
			t.Errorf("%s left after erase", f)
		}
	}
	if _, err := os.Stat(conf + ".rpmsave"); err != nil {
		t.Errorf("the edited settings were not kept as .rpmsave: %v", err)
	}
}

// secondBuild packages the same build/pkg tree again as version v (nfpm
// only: the binary is the same, the package version is what rpm compares).
func secondBuild(t *testing.T, p built, v string) string {
	t.Helper()
	dir := t.TempDir()
	arch := strings.TrimSpace(run(t, "go", "env", "GOARCH"))
	cmd := exec.Command("go", "tool", "nfpm", "package", "--config", "packaging/nfpm.yaml", "--packager", "rpm", "--target", dir+"/")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "VERSION="+v, "ARCH="+arch)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nfpm: %v\n%s", err, b)
	}
	m, _ := filepath.Glob(filepath.Join(dir, "*.rpm"))
	if len(m) != 1 {
		t.Fatalf("second build: %v", m)
	}
	return m[0]
}
