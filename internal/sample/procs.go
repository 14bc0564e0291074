package sample

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/torchmem/torchmem/internal/cgroup"
	"github.com/torchmem/torchmem/internal/jobs"
	"github.com/torchmem/torchmem/internal/procfs"
)

// procState is what the Sampler keeps about a process between Collects.
// A process is recognised by PID and name: a PID reused by a process of the
// same name within one tick keeps the old command line and PSS until the
// PSS tier re-reads it (its RSS will have moved), an accepted imprecision
// that saves reading /proc/<pid>/stat every tick.
type procState struct {
	status  procfs.Status
	cmdline []string
	torch   bool
	// PSS tier.
	pss      *procfs.SmapsRollup
	pssAt    time.Time
	rssAtPSS uint64
	oom      *procfs.OOMScore
	// cgroup of the process, read once.
	cg *cgroup.Path
}

func (p *procState) rss() uint64 {
	if p.status.VmRSSBytes == nil {
		return 0
	}
	return *p.status.VmRSSBytes
}

// pidList returns the PIDs to sample and whether they are one given job.
func (s *Sampler) pidList() ([]int, bool, error) {
	if s.opts.PIDs != nil {
		return s.opts.PIDs(), true, nil
	}
	if s.opts.CgroupPath != "" {
		dir, _, err := s.hier.MemoryDir(s.opts.CgroupPath)
		if err != nil {
			return nil, true, fmt.Errorf("cgroup %s: %w", s.opts.CgroupPath, err)
		}
		pids, err := readProcs(filepath.Join(dir, "cgroup.procs"))
		return pids, true, err
	}
	pids, err := s.fs.PIDs()
	return pids, false, err
}

// readProcs reads a cgroup.procs file: one PID a line.
func readProcs(path string) ([]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("parse %s: bad pid %q", path, f)
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// scan runs the fast tier over the processes and groups them into jobs.
func (s *Sampler) scan(ctx context.Context, gpuBy map[int]gpuUse) ([]jobs.Tree, error) {
	pids, restricted, err := s.pidList()
	if err != nil {
		return nil, err
	}
	seen := make(map[int]bool, len(pids))
	table := make([]jobs.Proc, 0, len(pids))
	for _, pid := range pids {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		ps := s.observe(pid, restricted)
		if ps == nil {
			continue
		}
		seen[pid] = true
		_, onGPU := gpuBy[pid]
		table = append(table, jobs.Proc{
			PID: pid, PPid: ps.status.PPid, Name: ps.status.Name, Cmdline: ps.cmdline,
			Torch: ps.torch || restricted, GPU: onGPU,
		})
	}
	for pid := range s.procs {
		if !seen[pid] {
			delete(s.procs, pid)
		}
	}
	trees := jobs.Group(table)
	if restricted && len(trees) > 1 {
		trees = mergeTrees(trees)
	}
	return trees, nil
}

// observe reads one process's status, and its command line and torch flag
// the first time it is seen. nil means skip it (vanished, kernel thread).
func (s *Sampler) observe(pid int, restricted bool) *procState {
	st, err := s.fs.Status(pid)
	if err != nil || (st.VmRSSBytes == nil && !restricted) {
		return nil // vanished, unreadable, or a kernel thread
	}
	ps := s.procs[pid]
	if ps == nil || ps.status.Name != st.Name {
		ps = &procState{}
		s.procs[pid] = ps
		ps.cmdline, _ = s.fs.Cmdline(pid)
		ps.torch = s.isTorch(pid, st.Name, ps.cmdline)
	}
	ps.status = st
	return ps
}

// isTorch checks the command line, then — only for Python processes, the
// maps scan costs ~0.3 ms — whether libtorch is mapped.
func (s *Sampler) isTorch(pid int, name string, args []string) bool {
	if jobs.IsTorchCmdline(args) {
		return true
	}
	if !jobs.LooksLikePython(name, args) {
		return false
	}
	ok, _ := s.fs.MapsContain(pid, "libtorch")
	return ok
}

// mergeTrees makes one job of a given process set with several top-level
// processes (a cgroup holding unrelated processes): the first root leads.
func mergeTrees(trees []jobs.Tree) []jobs.Tree {
	out := trees[0]
	for _, t := range trees[1:] {
		for _, m := range t.Members {
			m.Depth++
			if m.Role == jobs.RoleMain {
				m.Role = jobs.RoleChild
			}
			out.Members = append(out.Members, m)
		}
	}
	return []jobs.Tree{out}
}
