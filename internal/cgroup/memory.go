package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Memory is the memory state of one cgroup. Sizes are bytes; a nil field
// means the kernel has no such file for this version.
type Memory struct {
	// Path is the cgroup path (as in /proc/<pid>/cgroup); Dir the directory read.
	Path    string `json:"path"`
	Dir     string `json:"dir"`
	Version int    `json:"version"` // 1 or 2
	// Max is memory.max (v2) or memory.limit_in_bytes (v1).
	Max Limit `json:"max"`
	// High is memory.high (v2 only): above it the kernel throttles and reclaims.
	High *Limit `json:"high,omitempty"`
	// SwapMax is memory.swap.max (v2: swap alone) or memory.memsw.limit_in_bytes
	// (v1: memory+swap, see SwapMaxIncludesMemory).
	SwapMax               *Limit `json:"swap_max,omitempty"`
	SwapMaxIncludesMemory bool   `json:"swap_max_includes_memory,omitempty"`
	// UsageBytes is memory.current (v2) or memory.usage_in_bytes (v1): the
	// exact total the job is charged, page cache included.
	UsageBytes uint64 `json:"usage_bytes"`
	// PeakBytes is memory.peak (v2, kernel >= 5.19) or memory.max_usage_in_bytes (v1).
	PeakBytes *uint64 `json:"peak_bytes,omitempty"`
	// SwapBytes is memory.swap.current (v2) or memory.stat's total_swap (v1).
	SwapBytes *uint64 `json:"swap_bytes,omitempty"`
	Events    Events  `json:"events"`
	// Pressure is memory.pressure (v2 with PSI); nil on v1.
	Pressure *PSI `json:"pressure,omitempty"`
}

// Headroom returns how many bytes the group may still charge before its
// max limit, and false when there is no limit.
func (m Memory) Headroom() (uint64, bool) {
	if m.Max.Unlimited {
		return 0, false
	}
	if m.UsageBytes >= m.Max.Bytes {
		return 0, true
	}
	return m.Max.Bytes - m.UsageBytes, true
}

// MemoryDir returns the directory holding the memory files of the cgroup
// at path, and whether it is a v2 directory. The memory controller's v1
// mount wins on hybrid hosts (that is where the kernel charges memory).
func (h Hierarchy) MemoryDir(path string) (string, bool, error) {
	if h.MemoryV1 != nil {
		return join(*h.MemoryV1, path), false, nil
	}
	if h.Unified != nil {
		return join(*h.Unified, path), true, nil
	}
	return "", false, fmt.Errorf("no memory cgroup mounted (mode %s)", h.Mode)
}

// join maps a hierarchy path onto a mount, dropping the mount's own root
// (inside a container the mount shows only part of the hierarchy).
func join(m Mount, path string) string {
	rel := path
	if m.Root != "/" && strings.HasPrefix(path, m.Root) {
		rel = strings.TrimPrefix(path, m.Root)
	}
	return filepath.Join(m.Point, filepath.Clean("/"+rel))
}

// ReadMemory reads the memory state of the cgroup at path.
func (h Hierarchy) ReadMemory(path string) (Memory, error) {
	dir, v2, err := h.MemoryDir(path)
	if err != nil {
		return Memory{}, err
	}
	m, err := ReadMemoryDir(dir, v2)
	m.Path = path
	return m, err
}

// ReadMemoryDir reads the memory files in dir, a v2 or v1 cgroup directory.
func ReadMemoryDir(dir string, v2 bool) (Memory, error) {
	if v2 {
		return readV2(dir)
	}
	return readV1(dir)
}

// ReadEvents reads only the memory event counters in dir, a v2 or v1
// cgroup directory.
func ReadEvents(dir string, v2 bool) (Events, error) {
	if v2 {
		return readEventsV2(dir)
	}
	return readEventsV1(dir)
}

// readFile returns the trimmed content of dir/name; ok is false when the
// file does not exist (a kernel without it), which is not an error.
func readFile(dir, name string) (string, bool, error) {
	path := filepath.Join(dir, name)
	b, err := readSmall(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read %s: %w", path, err)
	}
	return strings.TrimSpace(string(b)), true, nil
}

// readSmall reads a cgroup file with open, read, close: the fast tier reads
// several per job per tick, and os.ReadFile's fstat and extra read double
// the system calls. Control files are produced in one piece, so a read
// that does not fill the buffer has read everything.
func readSmall(path string) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err == syscall.ENOENT {
		return nil, fs.ErrNotExist
	}
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	buf := make([]byte, 0, 512)
	for {
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		buf = buf[:len(buf)+n]
		if n == 0 || len(buf) < cap(buf) {
			return buf, nil
		}
		buf = append(buf, make([]byte, cap(buf))...)[:len(buf)]
	}
}

// mustUint reads a required counter file.
func mustUint(dir, name string) (uint64, error) {
	v, ok, err := readFile(dir, name)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, fmt.Errorf("read %s: %w", filepath.Join(dir, name), fs.ErrNotExist)
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parse %s: bad number %q", filepath.Join(dir, name), v)
	}
	return n, nil
}

// optUint reads a counter file the kernel may lack.
func optUint(dir, name string) (*uint64, error) {
	v, ok, err := readFile(dir, name)
	if err != nil || !ok {
		return nil, err
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("parse %s: bad number %q", filepath.Join(dir, name), v)
	}
	return &n, nil
}

// optLimit reads a limit file the kernel may lack.
func optLimit(dir, name string) (*Limit, error) {
	v, ok, err := readFile(dir, name)
	if err != nil || !ok {
		return nil, err
	}
	l, err := parseLimit(v)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", filepath.Join(dir, name), err)
	}
	return &l, nil
}
