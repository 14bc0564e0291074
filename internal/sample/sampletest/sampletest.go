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
// workers (PIDs MainPID, MainPID+1, …) under dir.
func WriteJobTree(dir string, workers int) (Tree, error) {
	t := Tree{ProcRoot: filepath.Join(dir, "proc"), SysRoot: filepath.Join(dir, "sys")}
	t.Mountinfo = filepath.Join(t.ProcRoot, "self", "mountinfo")
	files := map[string]string{
		"proc/meminfo":         "capture/meminfo",
		"proc/pressure/memory": "capture/pressure-memory",
	}
	for src, dst := range files {
		if err := copyFile(filepath.Join(dir, src), dst); err != nil {
			return t, err
		}
	}
	mi := "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
	if err := write(t.Mountinfo, []byte(mi)); err != nil {
		return t, err
	}
	cgDir := filepath.Join(t.SysRoot, "fs", "cgroup", "memory", CgroupPath)
	ents, _ := capture.ReadDir("capture/cgroup-v1")
	for _, e := range ents {
		if err := copyFile(filepath.Join(cgDir, e.Name()), "capture/cgroup-v1/"+e.Name()); err != nil {
			return t, err
		}
	}
	for i := 0; i <= workers; i++ {
		pid, ppid, kind := MainPID+i, MainPID, "worker"
		if i == 0 {
			ppid, kind = 1, "main"
		}
		if err := writeProc(t.ProcRoot, kind, pid, ppid); err != nil {
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

func writeProc(root, kind string, pid, ppid int) error {
	dir := filepath.Join(root, strconv.Itoa(pid))
	for _, f := range []string{"cmdline", "cgroup", "smaps_rollup", "oom_score", "oom_score_adj", "maps"} {
		if err := copyFile(filepath.Join(dir, f), "capture/"+kind+"/"+f); err != nil {
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
