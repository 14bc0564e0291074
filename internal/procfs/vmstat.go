package procfs

// /proc/vmstat, of which only one line is read here:
//
//	nr_free_pages 30977845
//	...
//	oom_kill 3
//
// (oom_kill exists from kernel 4.13; older kernels have no such line.)

import (
	"bufio"
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
)

// OOMKills returns /proc/vmstat oom_kill, the kernel's count of OOM kills
// since boot; nil (and no error) when the kernel does not keep it.
func (f FS) OOMKills() (*uint64, error) {
	path := filepath.Join(f.root, "vmstat")
	b, err := readSmall(path)
	if err != nil {
		return nil, err
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
