// Package sampletest writes fixture proc and sys trees of a real PyTorch
// job, for tests and benchmarks of the sampler and of `torchmem top`.
//
// The files under capture/ were read off a Debian 12 machine (kernel 6.18,
// cgroup v1 memory controller) while testdata/train_dataloader.py ran with
// Debian's torch 1.13 and a DataLoader of 4 workers: main/ is the training
// process, worker/ one DataLoader worker, cgroup-v1/ their memory cgroup.
// Only the command line was rewritten (the script's absolute path) and maps
// cut to its first lines plus the first libtorch mapping. The cgroup's
// memory.stat was read a few minutes after the other files (the group is a
// shared session cgroup, so its figures do not add up to usage_in_bytes).
package sampletest

import (
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
)

//go:embed capture
var capture embed.FS

// CgroupPath is the memory cgroup of every process of the fixture job.
const CgroupPath = "/process_api/8dfcf00b38dcf4c7addddcb2e218480e"

// Tree is a written fixture: ProcRoot and SysRoot to point a sampler at,
// Mountinfo (also at ProcRoot/self/mountinfo), and the job's PIDs, main first.
type Tree struct {
	ProcRoot  string
	SysRoot   string
	Mountinfo string
	PIDs      []int
}

// MainPID is the PID of the fixture job's main process; its workers follow.
const MainPID = 2000

// WriteJobTree writes a job of one main process and workers DataLoader
// workers (PIDs MainPID, MainPID+1, …) under dir, on a cgroup v1 host.
func WriteJobTree(dir string, workers int) (Tree, error) {
	return writeTree(dir, workers, false)
}

// WriteJobTreeV2 is WriteJobTree on a cgroup v2 host: the job's cgroup has
// the files captured on the H200 host after a kernel OOM kill in a 100 MB
// group (capture/cgroup-v2; memory.current, memory.max, memory.high and
// memory.swap.max completed by hand, see internal/cgroup/testdata/README.md).
func WriteJobTreeV2(dir string, workers int) (Tree, error) {
	return writeTree(dir, workers, true)
}

func writeTree(dir string, workers int, v2 bool) (Tree, error) {
	t := Tree{ProcRoot: filepath.Join(dir, "proc"), SysRoot: filepath.Join(dir, "sys")}
	t.Mountinfo = filepath.Join(t.ProcRoot, "self", "mountinfo")
	files := map[string]string{
		"proc/meminfo":         "capture/meminfo",
		"proc/pressure/memory": "capture/pressure-memory",
	}
	for dst, src := range files {
		if err := copyFile(filepath.Join(dir, dst), src); err != nil {
			return t, err
		}
	}
	mi, cgDir, src := "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n",
		filepath.Join(t.SysRoot, "fs", "cgroup", "memory", CgroupPath), "capture/cgroup-v1"
	if v2 {
		mi, cgDir, src = "29 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n",
			filepath.Join(t.SysRoot, "fs", "cgroup", CgroupPath), "capture/cgroup-v2"
	}
	if err := write(t.Mountinfo, []byte(mi)); err != nil {
		return t, err
	}
	ents, _ := capture.ReadDir(src)
	for _, e := range ents {
		if err := copyFile(filepath.Join(cgDir, e.Name()), src+"/"+e.Name()); err != nil {
			return t, err
		}
	}
	for i := 0; i <= workers; i++ {
		pid, ppid, kind := MainPID+i, MainPID, "worker"
		if i == 0 {
			ppid, kind = 1, "main"
		}
		if err := writeProc(t.ProcRoot, kind, pid, ppid, v2); err != nil {
			return t, err
		}
		t.PIDs = append(t.PIDs, pid)
	}
	procs := ""
	for _, p := range t.PIDs {
		procs += strconv.Itoa(p) + "\n"
	}
	return t, write(filepath.Join(cgDir, "cgroup.procs"), []byte(procs))
}

var (
	statusPID  = regexp.MustCompile(`(?m)^(Tgid|Pid|NStgid|NSpid):\t\d+$`)
	statusPPid = regexp.MustCompile(`(?m)^PPid:\t\d+$`)
	statHead   = regexp.MustCompile(`^\d+ (\([^)]*\)) (\S) \d+ `)
)

func writeProc(root, kind string, pid, ppid int, v2 bool) error {
	dir := filepath.Join(root, strconv.Itoa(pid))
	for _, f := range []string{"cmdline", "cgroup", "smaps_rollup", "oom_score", "oom_score_adj", "maps"} {
		if err := copyFile(filepath.Join(dir, f), "capture/"+kind+"/"+f); err != nil {
			return err
		}
	}
	if v2 { // a v2 host's /proc/<pid>/cgroup has the one unified line
		if err := write(filepath.Join(dir, "cgroup"), []byte("0::"+CgroupPath+"\n")); err != nil {
			return err
		}
	}
	st, err := capture.ReadFile("capture/" + kind + "/status")
	if err != nil {
		return err
	}
	st = statusPID.ReplaceAll(st, []byte("${1}:\t"+strconv.Itoa(pid)))
	st = statusPPid.ReplaceAll(st, []byte("PPid:\t"+strconv.Itoa(ppid)))
	if err := write(filepath.Join(dir, "status"), st); err != nil {
		return err
	}
	sb, err := capture.ReadFile("capture/" + kind + "/stat")
	if err != nil {
		return err
	}
	sb = statHead.ReplaceAll(sb, []byte(fmt.Sprintf("%d $1 $2 %d ", pid, ppid)))
	return write(filepath.Join(dir, "stat"), sb)
}

func copyFile(dst, src string) error {
	b, err := capture.ReadFile(src)
	if err != nil {
		return err
	}
	return write(dst, b)
}

func write(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
