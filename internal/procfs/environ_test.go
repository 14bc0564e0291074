package procfs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEnvironBounded(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "7")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	env := "SLURM_JOB_ID=4242\x00" + strings.Repeat("X=1\x00", 1000)
	if err := os.WriteFile(filepath.Join(dir, "environ"), []byte(env), 0o644); err != nil {
		t.Fatal(err)
	}
	fs, err := NewFS(root)
	if err != nil {
		t.Fatal(err)
	}
	b, err := fs.Environ(7, 64)
	if err != nil || len(b) != 64 || !strings.HasPrefix(string(b), "SLURM_JOB_ID=4242\x00") {
		t.Fatalf("Environ = %q, %v", b, err)
	}
	if _, err := fs.Environ(8, 64); !IsVanished(err) {
		t.Errorf("missing process: %v", err)
	}
	if self, err := NewFS("/proc"); err == nil {
		if b, err := self.Environ(os.Getpid(), 1<<20); err != nil || len(b) == 0 {
			t.Errorf("own environ: %d bytes, %v", len(b), err)
		}
	}
}
