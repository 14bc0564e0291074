package jobcgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// LeafName is the child group torchmem moves itself into inside a
// delegated cgroup v2 group that it runs in (a `systemd-run --user --scope
// -p Delegate=yes` scope, a Slurm step): v2 lets a group enable
// controllers for its children only while it holds no processes itself.
const LeafName = "torchmem-supervisor"

// enableFromLeaf moves this process into base/LeafName and enables the
// memory controller in base. If base holds other processes too, that
// still fails (EBUSY) and the caller undoes the move.
func (g *Group) enableFromLeaf(baseDir string) error {
	leaf := filepath.Join(baseDir, LeafName)
	if err := g.mkdir(leaf, false); err != nil {
		return err
	}
	if err := g.wr(filepath.Join(leaf, "cgroup.procs"), strconv.Itoa(os.Getpid())); err != nil {
		return fmt.Errorf("move torchmem into %s: %w", leaf, err)
	}
	g.movedFrom = baseDir
	if err := g.enableMemory(baseDir); err != nil {
		return fmt.Errorf("%s still holds other processes: %w", baseDir, err)
	}
	return nil
}
