// Package packaging_test builds the real DEB and RPM with scripts/package.sh
// and checks them with the distributions' own tools: `rpm -qp` for the RPM's
// files, config flags, summary and scriptlets, rpmlint (EL/Fedora settings,
// packaging/rpmlint.toml), an install, upgrade and erase into a scratch root
// with `rpm --root` (rpm_root_test.go), `dpkg-deb` for the DEB's files and
// conffiles, and `dpkg -i` + `torchmem --version` + `dpkg -P`.
package packaging_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Files both packages install, and those of one format (EL and Debian
// put the agent's settings and zsh completions in different places).
var (
	wantFiles = []string{
		"/usr/bin/torchmem",
		"/usr/lib/systemd/system/torchmem.service",
		"/usr/lib/tuned/torchmem-training/tuned.conf",
		"/usr/lib/tuned/torchmem-inference/tuned.conf",
		"/usr/share/man/man1/torchmem.1.gz",
		"/usr/share/man/man1/torchmem-run.1.gz",
		"/usr/share/man/man1/torchmem-completion.1.gz",
		"/usr/share/bash-completion/completions/torchmem",
		"/usr/share/fish/vendor_completions.d/torchmem.fish",
		"/usr/share/doc/torchmem/README.md",
		"/usr/share/doc/torchmem/examples/90-torchmem-sysctl.conf",
		"/var/lib/torchmem",
	}
	wantRPM = []string{"/etc/sysconfig/torchmem", "/usr/share/zsh/site-functions/_torchmem"}
	wantDEB = []string{"/etc/default/torchmem", "/usr/share/zsh/vendor-completions/_torchmem"}
)

type built struct {
	dir, deb, rpm string
	err           string
}

var (
	buildOnce sync.Once
	packages  built
)

// buildPackages runs scripts/package.sh once per test binary (VERSION
// 1.2.3): it compiles torchmem and generates its man pages, about a minute.
func buildPackages(t *testing.T) built {
	t.Helper()
	if testing.Short() {
		t.Skip("builds packages; skipped in -short")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "torchmem-pkg-")
		if err != nil {
			packages.err = err.Error()
			return
		}
		packages.dir = dir
		cmd := exec.Command("bash", "../scripts/package.sh", dir)
		cmd.Env = append(os.Environ(), "VERSION=1.2.3")
		if b, err := cmd.CombinedOutput(); err != nil {
			packages.err = "package.sh: " + err.Error() + "\n" + string(b)
			return
		}
		debs, _ := filepath.Glob(filepath.Join(dir, "*.deb"))
		rpms, _ := filepath.Glob(filepath.Join(dir, "*.rpm"))
		if len(debs) != 1 || len(rpms) != 1 {
			packages.err = "want one deb and one rpm, got " + strings.Join(append(debs, rpms...), " ")
			return
		}
		packages.deb, packages.rpm = debs[0], rpms[0]
	})
	if packages.err != "" {
		t.Fatal(packages.err)
	}
	return packages
}

func TestMain(m *testing.M) {
	code := m.Run()
	if packages.dir != "" {
		os.RemoveAll(packages.dir)
	}
	os.Exit(code)
}

func needTool(t *testing.T, name, pkg string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s not installed (Debian package %s)", name, pkg)
	}
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	b, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, b)
	}
	return string(b)
}

func hasAll(t *testing.T, list string, want []string) {
	t.Helper()
	for _, f := range want {
		if !strings.Contains(list, f+"\n") {
			t.Errorf("package lacks %s; has:\n%s", f, list)
		}
	}
}

func TestRPM(t *testing.T) {
	p := buildPackages(t)
	needTool(t, "rpm", "rpm")
	t.Run("files", func(t *testing.T) {
		list := run(t, "rpm", "-qpl", p.rpm)
		hasAll(t, list, append(wantFiles, wantRPM...))
		if strings.Contains(list, "/etc/default/") || strings.Contains(list, "vendor-completions") {
			t.Errorf("Debian paths in the RPM:\n%s", list)
		}
	})
	t.Run("config noreplace", func(t *testing.T) {
		// fflags: c = %config, n = noreplace, d = %doc.
		flags := run(t, "rpm", "-qp", "--qf", "[%{FILEFLAGS:fflags} %{FILENAMES}\n]", p.rpm)
		for _, want := range []string{"cn /etc/sysconfig/torchmem\n", "d /usr/share/doc/torchmem/README.md\n"} {
			if !strings.Contains(flags, want) {
				t.Errorf("want %q in:\n%s", want, flags)
			}
		}
		if cfg := run(t, "rpm", "-qp", "--configfiles", p.rpm); cfg != "/etc/sysconfig/torchmem\n" {
			t.Errorf("config files %q: only the settings file is configuration (the unit is a vendor file)", cfg)
		}
	})
	t.Run("summary and description", func(t *testing.T) {
		sum := strings.TrimSpace(run(t, "rpm", "-qp", "--qf", "%{SUMMARY}", p.rpm))
		desc := run(t, "rpm", "-qp", "--qf", "%{DESCRIPTION}", p.rpm)
		// EL packaging guidelines: a one-line summary under 80 columns
		// without a final period; a description of whole sentences.
		if sum == "" || len(sum) >= 80 || strings.HasSuffix(sum, ".") {
			t.Errorf("summary %q", sum)
		}
		for _, w := range []string{"cgroup", "Python 3.6", "tuned", "glibc 2.17"} {
			if !strings.Contains(desc, w) {
				t.Errorf("description lacks %q:\n%s", w, desc)
			}
		}
	})
	t.Run("scriptlets", func(t *testing.T) {
		s := run(t, "rpm", "-qp", "--scripts", p.rpm)
		for _, w := range []string{"postinstall scriptlet", "preuninstall scriptlet", "postuninstall scriptlet",
			"preset torchmem.service", "disable torchmem.service", "try-restart torchmem.service"} {
			if !strings.Contains(s, w) {
				t.Errorf("scriptlets lack %q:\n%s", w, s)
			}
		}
	})
	t.Run("rpmlint", func(t *testing.T) { rpmlint(t, p.rpm) })
}

// rpmlint checks the RPM with EL/Fedora settings. nfpm (rpmpack) stores
// absolute names in the cpio payload (/usr/bin/torchmem, not
// ./usr/bin/torchmem as rpmbuild does; rpm installs both alike), and
// rpmlint unpacks with `rpm2cpio | cpio -id`, which would write them to
// the real root: a cpio first on PATH adds --no-absolute-filenames.
func rpmlint(t *testing.T, rpm string) {
	needTool(t, "rpmlint", "rpmlint")
	realCPIO, err := exec.LookPath("cpio")
	if err != nil {
		t.Skip("no cpio")
	}
	bin := t.TempDir()
	wrapper := "#!/bin/sh\nexec " + realCPIO + " --no-absolute-filenames \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "cpio"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("rpmlint", "-c", "rpmlint.toml", rpm)
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, _ := cmd.CombinedOutput() // exit status 64/66 on errors or badness; the summary says which
	t.Logf("rpmlint -c packaging/rpmlint.toml:\n%s", out)
	if !strings.Contains(string(out), " 0 errors") {
		t.Errorf("rpmlint found errors:\n%s", out)
	}
	for _, bad := range []string{"no-binary", "invalid-license", "manpage-not-compressed", "no-changelogname-tag"} {
		if strings.Contains(string(out), bad) {
			t.Errorf("rpmlint: %s", bad)
		}
	}
}

func TestDEB(t *testing.T) {
	p := buildPackages(t)
	t.Run("files and conffiles", func(t *testing.T) {
		needTool(t, "dpkg-deb", "dpkg")
		var list strings.Builder
		for _, line := range strings.Split(run(t, "dpkg-deb", "-c", p.deb), "\n") {
			if f := strings.Fields(line); len(f) >= 6 {
				list.WriteString(strings.TrimSuffix(strings.TrimPrefix(f[5], "."), "/") + "\n")
			}
		}
		hasAll(t, list.String(), append(wantFiles, wantDEB...))
		if strings.Contains(list.String(), "/etc/sysconfig") {
			t.Errorf("EL path in the DEB:\n%s", list.String())
		}
		ctl := t.TempDir()
		run(t, "dpkg-deb", "-e", p.deb, ctl)
		conf, err := os.ReadFile(filepath.Join(ctl, "conffiles"))
		if err != nil || strings.TrimSpace(string(conf)) != "/etc/default/torchmem" {
			t.Errorf("conffiles %q %v", conf, err)
		}
		for _, s := range []string{"postinst", "prerm", "postrm"} {
			if _, err := os.Stat(filepath.Join(ctl, s)); err != nil {
				t.Errorf("no %s: %v", s, err)
			}
		}
	})
	t.Run("install", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("dpkg -i needs root")
		}
		needTool(t, "dpkg", "dpkg")
		if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
			t.Skip("package built for another architecture")
		}
		run(t, "dpkg", "-i", p.deb)
		defer exec.Command("dpkg", "-P", "torchmem").Run()
		b, err := exec.Command("/usr/bin/torchmem", "--version").CombinedOutput()
		if err != nil || !strings.Contains(string(b), "1.2.3") {
			t.Fatalf("installed torchmem --version: %v %q", err, b)
		}
	})
}
