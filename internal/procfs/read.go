package procfs

import (
	"fmt"
	"io/fs"
	"sync"
	"syscall"
)

// bufPool holds read buffers: the fast tier reads one status file per
// process per tick, and an allocation per read would be most of its
// user-space cost.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 8<<10); return &b }}

// withFile reads a small proc file and passes its content to fn, which must
// not keep the slice. It uses three system calls (open, read, close)
// instead of os.ReadFile's five or six: these files are produced by the
// kernel in one piece (single_open seq files: status, smaps_rollup,
// oom_score), so a read that does not fill the buffer has read everything.
func withFile(path string, fn func([]byte) error) error {
	fd, err := openRetry(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	defer syscall.Close(fd)
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	buf, n := *bp, 0
	for {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
		n += m
		if m == 0 || n < len(buf) {
			break
		}
		buf = append(buf, make([]byte, len(buf))...) // full: grow and go on
		*bp = buf
	}
	return fn(buf[:n])
}

func openRetry(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.ENOENT {
			return -1, fs.ErrNotExist // IsVanished and errors.Is(fs.ErrNotExist) hold
		}
		return fd, err
	}
}
