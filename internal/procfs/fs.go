// Package procfs reads the host and per-process memory figures torchmem needs
// from a proc file system rooted at an injected path (never a literal /proc),
// so every reader runs against fixture trees in tests.
//
// It builds on github.com/prometheus/procfs where that library covers a file
// (meminfo, stat, cmdline) and hand-writes
// the rest (status with presence flags, smaps_rollup with its smaps fallback, oom_score,
// PSI through the psi subpackage shared with internal/cgroup,
// sysctls, THP, maps, limits), where a field must be told missing from zero or the
// cost must stay at the kernel's own. A process's cgroup path is read by
// internal/cgroup (ProcessPath), which also reads that cgroup's files.
//
// Exported API:
//
//	NewFS(procRoot string) (FS, error)
//	(FS) Root() string
//	(FS) PIDs() ([]int, error)
//	(FS) Meminfo() (Meminfo, error)
//	(FS) MemoryPressure() (PSI, error)            // ErrNotPresent without PSI
//	(FS) Status(pid int) (Status, error)
//	(FS) Stat(pid int) (Stat, error)
//	(FS) Cmdline(pid int) ([]string, error)
//	(FS) SmapsRollup(pid int) (SmapsRollup, error) // falls back to summing smaps
//	(FS) SmapsSum(pid int) (SmapsRollup, error)    // always sums smaps (as smem does)
//	(FS) OOMScore(pid int) (OOMScore, error)
//	(FS) Limits(pid int) (Limits, error)          // keyed by "Max open files"; Unlimited = -1
//	(FS) SelfLimits() (Limits, error)             // what this process hands to its children
//	FormatLimit(n int64) string                   // "unlimited" or the number
//	(FS) MapsContain(pid int, needle string) (bool, error)
//	(FS) Sysctl(name string) (string, error)
//	(FS) BootID() (string, error)                 // sys/kernel/random/boot_id
//	(FS) OOMKills() (*uint64, error)              // nil before kernel 4.13
//	ReadTHP(sysRoot string) (THP, error)
//	IsVanished(err error) bool
//
// A process that exits between listing and reading makes a reader return an
// error for which IsVanished is true; callers skip that process silently.
package procfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	prom "github.com/prometheus/procfs"
)

// DefaultRoot is the host's proc file system, for callers given no root.
const DefaultRoot = "/proc"

// ErrNotPresent means the kernel does not provide the file on this host
// (PSI on CentOS 7 or on RHEL 8 without psi=1): a state, not a failure.
var ErrNotPresent = errors.New("not provided by this kernel")

// FS is a proc file system at a root path.
type FS struct {
	root string
	prom prom.FS
}

// NewFS returns an FS rooted at procRoot (normally "/proc").
func NewFS(procRoot string) (FS, error) {
	p, err := prom.NewFS(procRoot)
	if err != nil {
		return FS{}, fmt.Errorf("open proc root %s: %w", procRoot, err)
	}
	return FS{root: procRoot, prom: p}, nil
}

// Root returns the proc root path this FS reads.
func (f FS) Root() string { return f.root }

func (f FS) path(parts ...string) string {
	return filepath.Join(append([]string{f.root}, parts...)...)
}

func (f FS) pidPath(pid int, file string) string {
	return filepath.Join(f.root, strconv.Itoa(pid), file)
}

// IsVanished reports whether err means the process went away while it was
// being read (ENOENT on its directory, ESRCH from the kernel).
func IsVanished(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}

// PIDs lists the numeric entries of the proc root (every process).
func (f FS) PIDs() ([]int, error) {
	d, err := os.Open(f.root)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", f.root, err)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", f.root, err)
	}
	pids := make([]int, 0, len(names))
	for _, n := range names {
		if n == "" || n[0] < '0' || n[0] > '9' {
			continue
		}
		if pid, err := strconv.Atoi(n); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// readSmall reads a whole small file with os.ReadFile (reads until EOF):
// for files that are not one single_open piece, such as vmstat, where
// withFile's one short read would not be the whole file.
func readSmall(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b, nil
}
