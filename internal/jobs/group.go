// Package jobs groups processes into PyTorch jobs and totals their memory.
//
// A job is a process tree whose members use a GPU or run Python with torch
// loaded: its root is the topmost such process in an unbroken chain of
// them (torchrun, or the training script), and every descendant belongs to
// it — DataLoader workers fold under their parent instead of becoming jobs
// of their own. Grouping is a pure function over a process table (Group);
// Totals sums the members' figures and names the source of each.
//
// Exported API:
//
//	Group(procs []Proc) []Tree
//	IsTorchCmdline(args []string) bool
//	LooksLikePython(name string, args []string) bool
//	Role(p, parent Proc) string                       // RoleMain, RoleWorker, RoleChild
//	Job, Process, Totals; (*Job).Total(gpuSource string)
//	CommandLine(args []string, name string) string
package jobs

import (
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Proc is what grouping needs to know about one process.
type Proc struct {
	PID     int
	PPid    int
	Name    string   // comm, from /proc/<pid>/status
	Cmdline []string // from /proc/<pid>/cmdline
	// Torch: libtorch is mapped (/proc/<pid>/maps) or the command line names torch.
	Torch bool
	// GPU: the GPU backend lists this PID.
	GPU bool
}

// Member is one process of a Tree, in depth-first order.
type Member struct {
	PID   int
	Depth int // 0 for the root
	Role  string
}

// Tree is one job's processes: the root first, then its descendants
// depth-first, children ordered by PID.
type Tree struct {
	RootPID int
	Members []Member
}

// Roles of a process inside its job.
const (
	RoleMain   = "main"   // the job's root
	RoleWorker = "worker" // a forked or spawned worker (DataLoader, multiprocessing)
	RoleChild  = "child"  // any other descendant
)

func interesting(p Proc) bool { return p.Torch || p.GPU }

// Group finds the jobs in a process table. Processes whose parent is not in
// procs are treated as top-level.
func Group(procs []Proc) []Tree {
	byPID := make(map[int]Proc, len(procs))
	children := map[int][]int{}
	for _, p := range procs {
		byPID[p.PID] = p
	}
	for _, p := range procs {
		if _, ok := byPID[p.PPid]; ok && p.PPid != p.PID {
			children[p.PPid] = append(children[p.PPid], p.PID)
		}
	}
	for _, c := range children {
		sort.Ints(c)
	}
	roots := map[int]bool{}
	for _, p := range procs {
		if interesting(p) {
			roots[rootOf(p, byPID)] = true
		}
	}
	rootList := make([]int, 0, len(roots))
	for r := range roots {
		rootList = append(rootList, r)
	}
	sort.Ints(rootList)
	trees := make([]Tree, 0, len(rootList))
	for _, r := range rootList {
		t := Tree{RootPID: r}
		walk(r, 0, byPID, children, &t)
		trees = append(trees, t)
	}
	return trees
}

// rootOf climbs while the parent is interesting too; the guard stops on a
// cycle in a corrupt table.
func rootOf(p Proc, byPID map[int]Proc) int {
	cur := p
	for guard := 0; guard < 4096; guard++ {
		parent, ok := byPID[cur.PPid]
		if !ok || parent.PID == cur.PID || !interesting(parent) {
			return cur.PID
		}
		cur = parent
	}
	return cur.PID
}

func walk(pid, depth int, byPID map[int]Proc, children map[int][]int, t *Tree) {
	if depth > 256 {
		return
	}
	p := byPID[pid]
	role := RoleMain
	if depth > 0 {
		role = Role(p, byPID[p.PPid])
	}
	t.Members = append(t.Members, Member{PID: pid, Depth: depth, Role: role})
	for _, c := range children[pid] {
		walk(c, depth+1, byPID, children, t)
	}
}

// Role tells a worker from another child: a DataLoader worker is a fork of
// its parent (same command line), or a multiprocessing spawn child.
func Role(p, parent Proc) string {
	if len(p.Cmdline) > 0 && slices.Equal(p.Cmdline, parent.Cmdline) {
		return RoleWorker
	}
	joined := strings.Join(p.Cmdline, " ")
	if strings.Contains(joined, "multiprocessing.spawn") || strings.Contains(joined, "multiprocessing.forkserver") {
		return RoleWorker
	}
	return RoleChild
}

// LooksLikePython reports whether a process may be a Python interpreter,
// so that only those get the more costly maps scan for libtorch.
func LooksLikePython(name string, args []string) bool {
	if strings.HasPrefix(name, "python") || strings.HasPrefix(name, "pt_") || name == "torchrun" {
		return true
	}
	return len(args) > 0 && strings.HasPrefix(filepath.Base(args[0]), "python")
}

// IsTorchCmdline reports whether the command line itself names torch
// (torchrun, python -m torch.distributed.run, accelerate, deepspeed).
func IsTorchCmdline(args []string) bool {
	for i, a := range args {
		if i > 3 {
			break
		}
		base := filepath.Base(a)
		if base == "torchrun" || base == "accelerate" || base == "deepspeed" || strings.HasPrefix(a, "torch.") {
			return true
		}
	}
	return false
}
