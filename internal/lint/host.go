package lint

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
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

// ReadHost reads the limits of this machine: procRoot/self/limits and a
// statfs of root/dev/shm.
func ReadHost(procRoot, root string) Host {
	var h Host
	var notes []string
	h.RootUser = readRealUID(filepath.Join(procRoot, "self", "status")) == 0
	path := filepath.Join(procRoot, "self", "limits")
	if fh, err := os.Open(path); err != nil {
		notes = append(notes, fmt.Sprintf("read %s: %v", path, err))
	} else {
		h.MaxProcs, h.Unlimited, err = parseLimitsNproc(fh)
		fh.Close()
		if err != nil {
			notes = append(notes, fmt.Sprintf("parse %s: %v", path, err))
		}
	}
	shm := filepath.Join(root, "dev", "shm")
	var st unix.Statfs_t
	if err := unix.Statfs(shm, &st); err != nil {
		notes = append(notes, fmt.Sprintf("statfs %s: %v", shm, err))
	} else {
		size := uint64(st.Blocks) * uint64(st.Bsize)
		h.ShmBytes = &size
	}
	h.Note = strings.Join(notes, "; ")
	return h
}

// parseLimitsNproc reads the soft limit of the "Max processes" line:
//
//	Limit                     Soft Limit           Hard Limit           Units
//	Max processes             63704                63704                processes
func parseLimitsNproc(r io.Reader) (*uint64, bool, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, "Max processes")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) < 1 {
			return nil, false, fmt.Errorf("short Max processes line %q", line)
		}
		if fields[0] == "unlimited" {
			return nil, true, nil
		}
		v, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			return nil, false, fmt.Errorf("Max processes soft limit %q: %w", fields[0], err)
		}
		return &v, false, nil
	}
	if err := sc.Err(); err != nil {
		return nil, false, err
	}
	return nil, false, fmt.Errorf("no Max processes line")
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
