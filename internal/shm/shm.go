// Package shm reads /dev/shm, the tmpfs where DataLoader workers hand
// batches to the main process, of a host whose file-system root is injected
// (never a literal "/"), so tests run against fixture trees.
//
// Two facts: the size its tmpfs mount is configured with, from mountinfo
// (mount.go; it reads fixture trees, and is what doctor and tune judge),
// and statfs(2)'s figures on <root>/dev/shm, as df shows them:
//
//	Filesystem      Size  Used Avail Use% Mounted on
//	tmpfs            63G  1.2G   62G   2% /dev/shm
//
// Exported API:
//
//	Read(root string) (Usage, error)                       // ErrNotPresent without a <root>/dev/shm
//	ReadMount(procRoot string, memTotal uint64) (Mount, error) // <procRoot>/self/mountinfo
//	ParseMount(mountinfo string, memTotal uint64) Mount
//	(Mount) Judge(memTotal uint64) Level                   // Enough, Small, TooSmall
//	(Mount) Title() string                                 // "/dev/shm is 64.00 MiB"
//
// A host without /dev/shm (a minimal container) is a state: Read's error
// is then ErrNotPresent, reported once, never a failure of the command.
package shm

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// ErrNotPresent means the host has no /dev/shm.
var ErrNotPresent = errors.New("no /dev/shm")

// Usage is the statfs of /dev/shm, in bytes.
type Usage struct {
	// SizeBytes is the file system's size (blocks x block size): for a
	// tmpfs, the size= it was mounted with.
	SizeBytes uint64 `json:"size_bytes"`
	// UsedBytes is what the files in it hold (size - free blocks).
	UsedBytes uint64 `json:"used_bytes"`
	// FreeBytes is what an unprivileged process can still write (available
	// blocks).
	FreeBytes uint64 `json:"free_bytes"`
}

// Read statfs's <root>/dev/shm.
func Read(root string) (Usage, error) {
	path := filepath.Join(root, "dev", "shm")
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Usage{}, fmt.Errorf("statfs %s: %w (%w)", path, err, ErrNotPresent)
		}
		return Usage{}, fmt.Errorf("statfs %s: %w", path, err)
	}
	return usage(st), nil
}

// usage converts statfs's blocks to bytes.
func usage(st unix.Statfs_t) Usage {
	bs := uint64(st.Bsize)
	return Usage{
		SizeBytes: uint64(st.Blocks) * bs,
		UsedBytes: (uint64(st.Blocks) - min(uint64(st.Bfree), uint64(st.Blocks))) * bs,
		FreeBytes: uint64(st.Bavail) * bs,
	}
}
