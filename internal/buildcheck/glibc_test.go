package buildcheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const moduleRoot = "../.."

func need(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed: cannot check the binary's glibc needs", tool)
		}
	}
}

func goBuild(t *testing.T, cgo, out, pkg string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = moduleRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED="+cgo)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=%s go build %s: %v\n%s", cgo, pkg, err, b)
	}
}

func checkGlibc(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{"scripts/check-glibc.sh"}, args...)...)
	cmd.Dir = moduleRoot
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

// The GPU package dlopens NVML through purego without cgo: the binary is
// then dynamically linked (libc, libdl, libpthread) but must import nothing
// versioned newer than GLIBC_2.17. It must also run here.
func TestGPUBinaryNeedsNoNewGlibc(t *testing.T) {
	need(t, "go", "bash", "readelf")
	bin := filepath.Join(t.TempDir(), "gpumain")
	goBuild(t, "0", bin, "./internal/buildcheck/testdata/gpumain")
	out, code := checkGlibc(t, bin)
	if code != 0 || !strings.Contains(out, "OK: ") {
		t.Fatalf("check-glibc.sh exit %d:\n%s", code, out)
	}
	run, err := exec.Command(bin).CombinedOutput()
	if err != nil || !strings.Contains(string(run), "backend=") {
		t.Fatalf("purego binary does not run: %v\n%s", err, run)
	}
	t.Logf("%s%s", out, run)
}

// The release build of the whole command.
func TestTorchmemBinaryNeedsNoNewGlibc(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: links the whole release binary; make test runs it (TestGPUBinaryNeedsNoNewGlibc checks the purego part)")
	}
	need(t, "go", "bash", "readelf")
	bin := filepath.Join(t.TempDir(), "torchmem")
	goBuild(t, "0", bin, "./cmd/torchmem")
	if out, code := checkGlibc(t, bin); code != 0 {
		t.Fatalf("check-glibc.sh exit %d:\n%s", code, out)
	}
}

// The check must be able to fail: a cgo build on this (newer) glibc
// imports GLIBC_2.3x symbols.
func TestCheckCatchesCgoBuild(t *testing.T) {
	need(t, "go", "bash", "readelf", "cc")
	bin := filepath.Join(t.TempDir(), "gpumain-cgo")
	goBuild(t, "1", bin, "./internal/buildcheck/testdata/gpumain")
	out, code := checkGlibc(t, bin)
	if !strings.Contains(out, "GLIBC_2.3") {
		t.Skipf("this host's glibc is old enough that cgo needs nothing newer:\n%s", out)
	}
	if code != 1 || !strings.Contains(out, "FAIL") {
		t.Fatalf("a cgo binary needing %s passed (exit %d)", out, code)
	}
}
