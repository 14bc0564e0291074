package lint

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/torchmem/torchmem/internal/procfs"
	"github.com/torchmem/torchmem/internal/shm"
)

// Host is what TM013 knows about the machine the jobs run on. A nil field
// was not readable; Unlimited means RLIMIT_NPROC is "unlimited".
type Host struct {
	MaxProcs  *uint64 // soft "Max processes" from /proc/self/limits (ulimit -u)
	Unlimited bool
	ShmBytes  *uint64 // size of the /dev/shm file system
	// RootUser: the jobs would run as uid 0, which the kernel exempts from
	// RLIMIT_NPROC, so the process-limit check does not apply.
	RootUser bool
	Note     string // why a part could not be read, for the one-line notice
}

// ReadHost reads the limits of this machine: procRoot/self/limits (with
// procfs's reader) and the size of root/dev/shm (shm's reader).
func ReadHost(procRoot, root string) Host {
	var h Host
	var notes []string
	h.RootUser = readRealUID(filepath.Join(procRoot, "self", "status")) == 0
	if l, err := readSelfLimits(procRoot); err != nil {
		notes = append(notes, err.Error())
	} else if h.MaxProcs, h.Unlimited, err = nproc(l); err != nil {
		notes = append(notes, fmt.Sprintf("%s: %v", filepath.Join(procRoot, "self", "limits"), err))
	}
	if u, err := shm.Read(root); err != nil {
		notes = append(notes, err.Error())
	} else {
		h.ShmBytes = &u.SizeBytes
	}
	h.Note = strings.Join(notes, "; ")
	return h
}

func readSelfLimits(procRoot string) (procfs.Limits, error) {
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Join(procRoot, "self", "limits"), err)
	}
	return fs.SelfLimits()
}

// nproc returns the soft "Max processes" limit (ulimit -u), or true when
// it is unlimited.
func nproc(l procfs.Limits) (*uint64, bool, error) {
	r, ok := l["Max processes"]
	switch {
	case !ok:
		return nil, false, fmt.Errorf("no Max processes line")
	case r.Soft == procfs.Unlimited:
		return nil, true, nil
	}
	v := uint64(r.Soft)
	return &v, false, nil
}

// readRealUID returns the real uid from a /proc/<pid>/status file
// ("Uid:\t1000\t1000\t1000\t1000"), or -1 when it cannot be read.
func readRealUID(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		rest, ok := strings.CutPrefix(line, "Uid:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return -1
		}
		uid, err := strconv.Atoi(f[0])
		if err != nil {
			return -1
		}
		return uid
	}
	return -1
}
