package sample

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/torchmem/torchmem/internal/cgroup"
	"github.com/torchmem/torchmem/internal/jobs"
	"github.com/torchmem/torchmem/internal/procfs"
)

// procState is what the Sampler keeps about a process between Collects.
// A process is recognised by PID, name and parent: a PID reused within one
// tick by a process of the same name and parent keeps the old command line
// and PSS until the PSS tier re-reads it (its RSS will have moved), an
// accepted imprecision that saves reading /proc/<pid>/stat every tick. A
// reparented process is simply read afresh.
type procState struct {
	status  procfs.Status
	cmdline []string
	torch   bool
	// torchKnown: torch has been decided (see detectTorch).
	torchKnown bool
	// torchRecheckRSS: a Python process whose maps had no libtorch yet is
	// scanned again only once its RSS reaches this (importing torch maps
	// hundreds of MB), so a job seen before its `import torch` is found.
	torchRecheckRSS uint64
	// PSS tier.
	pss      *procfs.SmapsRollup
	pssAt    time.Time
	rssAtPSS uint64
	oom      *procfs.OOMScore
	// cgroup of the process, read once.
	cg *cgroup.Path
	// ident: a job root's identity and start time (identity.go).
	ident *jobIdent
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
		if errors.Is(err, fs.ErrNotExist) {
			return nil, true, fmt.Errorf("cgroup %s: no such memory cgroup (no %s)", s.opts.CgroupPath, dir)
		}
		return pids, true, err
	}
	pids, err := s.fs.PIDs()
	return pids, false, err
}

// readProcs reads a cgroup.procs file: one PID a line.
func readProcs(path string) ([]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err // *PathError names the operation and the file
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
	for _, pid := range pids {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if s.observe(pid, restricted) != nil {
			seen[pid] = true
		}
	}
	for pid := range s.procs {
		if !seen[pid] {
			delete(s.procs, pid)
		}
	}
	table := make([]jobs.Proc, 0, len(seen))
	for pid := range seen {
		ps := s.procs[pid]
		_, onGPU := gpuBy[pid]
		table = append(table, jobs.Proc{
			PID: pid, PPid: ps.status.PPid, Name: ps.status.Name, Cmdline: ps.cmdline,
			Torch: s.detectTorch(pid, 0) || restricted, GPU: onGPU,
		})
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
	if ps == nil || ps.status.Name != st.Name || ps.status.PPid != st.PPid {
		ps = &procState{}
		s.procs[pid] = ps
		ps.cmdline, _ = s.fs.Cmdline(pid)
	}
	ps.status = st
	return ps
}

// torchImportRSS is RSS growth after which a Python process without
// libtorch is scanned again: `import torch` alone maps well over this.
const torchImportRSS = 32 << 20

// detectTorch decides once per process whether it runs torch: from the
// command line; from its parent when it is a fork with the parent's command
// line (a DataLoader worker shares the parent's mappings); and only then,
// for Python processes, by scanning /proc/<pid>/maps for libtorch — ~17 ms
// for a torch process with 1,800 mappings on a loaded machine, so a job
// with 32 workers pays it once, not 33 times.
func (s *Sampler) detectTorch(pid, depth int) bool {
	ps := s.procs[pid]
	if ps == nil {
		return false
	}
	if ps.torchKnown {
		return ps.torch
	}
	if ps.torchRecheckRSS > 0 && ps.rss() < ps.torchRecheckRSS {
		return false
	}
	st := ps.status
	switch {
	case jobs.IsTorchCmdline(ps.cmdline):
		ps.torch = true
	case !jobs.LooksLikePython(st.Name, ps.cmdline):
		ps.torch = false
	case depth < 64 && s.procs[st.PPid] != nil && len(ps.cmdline) > 0 &&
		slices.Equal(ps.cmdline, s.procs[st.PPid].cmdline) && s.detectTorch(st.PPid, depth+1):
		ps.torch = true
	default:
		var err error
		ps.torch, err = s.fs.MapsContain(pid, "libtorch")
		if errors.Is(err, fs.ErrPermission) {
			// Without this, a non-root user sees "no jobs" and cannot tell why.
			s.notice("jobs: another user's Python process is not readable (/proc/<pid>/maps needs root or its owner): " +
				"its job shows only if it uses a GPU or names torch on its command line")
		}
		if err == nil && !ps.torch {
			// Not yet: it may import torch later. Look again after growth.
			ps.torchRecheckRSS = ps.rss() + torchImportRSS
			return false
		}
	}
	ps.torchKnown = true
	return ps.torch
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
