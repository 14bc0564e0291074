package web

// /proc/vmstat, of which only one line matters here:
//
//	nr_free_pages 30977845
//	...
//	oom_kill 3
//
// (oom_kill exists from kernel 4.13; older kernels have no such line.)
// A small reader lives here rather than in internal/procfs because serve is
// its only user; it should move there if another command needs it.

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// readOOMKills returns the kernel's count of OOM kills since boot, nil
// when the kernel does not keep it.
func readOOMKills(procRoot string) (*uint64, error) {
	path := filepath.Join(procRoot, "vmstat")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	n, err := parseOOMKills(b)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	return n, nil
}

// parseOOMKills finds the oom_kill counter in vmstat text.
func parseOOMKills(b []byte) (*uint64, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		v, ok := bytes.CutPrefix(sc.Bytes(), []byte("oom_kill "))
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("oom_kill %q: not a counter", v)
		}
		return &n, nil
	}
	return nil, sc.Err()
}
