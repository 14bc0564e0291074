package procfs

// /proc/<pid>/maps, scanned (not parsed) for a library name:
//
//	7f2c3a000000-7f2c3e000000 r-xp 00000000 08:01 1234  /usr/lib/.../libtorch_cpu.so

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
)

// MapsContain reports whether any line of <root>/<pid>/maps contains needle
// (e.g. "libtorch"). It streams the file and stops at the first match.
func (f FS) MapsContain(pid int, needle string) (bool, error) {
	path := f.pidPath(pid, "maps")
	fh, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	defer fh.Close()
	ok, err := scanContains(bufio.NewReaderSize(fh, 64<<10), []byte(needle))
	if err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	return ok, nil
}

func scanContains(r *bufio.Reader, needle []byte) (bool, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if bytes.Contains(sc.Bytes(), needle) {
			return true, nil
		}
	}
	return false, sc.Err()
}
