package shm

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func TestRead(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if _, err := Read(root); !errors.Is(err, ErrNotPresent) {
		t.Fatalf("no dev/shm: err = %v, want ErrNotPresent", err)
	}
	if err := os.MkdirAll(filepath.Join(root, "dev", "shm"), 0o755); err != nil {
		t.Fatal(err)
	}
	u, err := Read(root)
	if err != nil || u.SizeBytes == 0 || u.UsedBytes+u.FreeBytes > u.SizeBytes {
		t.Fatalf("Read = %+v, %v", u, err)
	}
}

// A 64 MiB tmpfs (Docker's default) with 16 MiB written, as the kernel
// reports it in 4 KiB blocks.
func TestUsage(t *testing.T) {
	t.Parallel()
	st := unix.Statfs_t{Bsize: 4096, Blocks: 16384, Bfree: 12288, Bavail: 12288}
	u := usage(st)
	if u != (Usage{SizeBytes: 64 << 20, UsedBytes: 16 << 20, FreeBytes: 48 << 20}) {
		t.Fatalf("usage = %+v", u)
	}
	// Bfree above Blocks (a racing statfs) never wraps Used around.
	if u := usage(unix.Statfs_t{Bsize: 4096, Blocks: 1, Bfree: 2}); u.UsedBytes != 0 {
		t.Fatalf("used = %d", u.UsedBytes)
	}
}
