package procfs

// /proc/<pid>/maps, the lines that map a file of /dev/shm: the POSIX
// shared memory DataLoader workers hand batches to the main process in
// (torch's file_descriptor strategy unlinks the file at once, hence
// "(deleted)"):
//
//	7f1c8a000000-7f1c8c000000 rw-s 00000000 00:1a 4189 /dev/shm/torch_1234_567_0 (deleted)

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
)

// ShmMap is one mapping of a /dev/shm file.
type ShmMap struct {
	// Key is the file's device and inode ("00:1a 4189"): the same file
	// mapped by several processes, or twice by one, has one key.
	Key string
	// Bytes is the mapping's length (end - start).
	Bytes uint64
}

// ShmMaps lists the mappings of /dev/shm files in <root>/<pid>/maps.
func (f FS) ShmMaps(pid int) ([]ShmMap, error) {
	path := f.pidPath(pid, "maps")
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer fh.Close()
	out, err := parseShmMaps(fh)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}

var devShm = []byte(" /dev/shm/")

// parseShmMaps keeps the lines whose path is under /dev/shm; other lines
// (thousands in a torch process) are only searched for that path.
func parseShmMaps(r io.Reader) ([]ShmMap, error) {
	// Lines are ~100 bytes: the scanner's 4 KiB buffer holds them (a
	// longer path grows it); a 64 KiB one was most of the cost per file.
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4<<10), 1<<20)
	var out []ShmMap
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, devShm) {
			continue
		}
		f := bytes.Fields(line)
		if len(f) < 6 {
			continue
		}
		lo, hi, ok := bytes.Cut(f[0], []byte("-"))
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(string(lo), 16, 64)
		end, err2 := strconv.ParseUint(string(hi), 16, 64)
		if err1 != nil || err2 != nil || end < start {
			continue
		}
		out = append(out, ShmMap{Key: string(f[3]) + " " + string(f[4]), Bytes: end - start})
	}
	return out, sc.Err()
}
