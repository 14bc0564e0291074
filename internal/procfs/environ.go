package procfs

// /proc/<pid>/environ: the environment a process was started with, NUL
// separated; readable by root and the process's owner only (EACCES
// otherwise), empty for kernel threads and zombies:
//
//	SLURM_JOB_ID=4242\x00SLURM_STEP_ID=0\x00HOSTNAME=node01\x00…

import (
	"fmt"
	"io"
	"os"
)

// Environ reads at most max bytes of <root>/<pid>/environ. The file is
// the process's own and can be large (an environment may hold megabytes),
// so it is never read whole; a cut last entry is the caller's to ignore.
func (f FS) Environ(pid int, max int) ([]byte, error) {
	path := f.pidPath(pid, "environ")
	fh, err := os.Open(path)
	if err != nil {
		return nil, err // *PathError names the file; IsVanished and fs.ErrPermission hold
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, int64(max)))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b, nil
}
