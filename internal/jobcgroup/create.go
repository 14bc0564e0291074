package jobcgroup

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/torchmem/torchmem/internal/cgroup"
	"golang.org/x/sys/unix"
)

// hierarchy is where the memory controller is mounted and which cgroup this
// process is in there.
type hierarchy struct {
	version   int
	mount     string // mount point of the memory (v1) or unified (v2) hierarchy
	mountRoot string // root of the mount inside the hierarchy ("/" unless namespaced)
	freezer   string // v1 freezer mount point, "" when absent
	own       string // this process's cgroup relative to mount, "/..."
}

// Create makes the job's group with its limits. A create that fails
// halfway removes what it made. Notices lists degraded settings (a limit
// the hierarchy cannot express) in one line each.
func Create(opts Options) (*Group, []string, error) {
	h, err := detect(opts.ProcRoot)
	if err != nil {
		return nil, nil, err
	}
	if opts.Name == "" || strings.ContainsAny(opts.Name, "/\x00") || opts.Name == "." || opts.Name == ".." {
		return nil, nil, fmt.Errorf("bad cgroup name %q", opts.Name)
	}
	var lastErr error
	for _, base := range candidateBases(h) {
		g, notes, err := createAt(h, base, opts)
		if err == nil {
			return g, notes, nil
		}
		lastErr = err
	}
	return nil, nil, fmt.Errorf("%w: %v", ErrNoCgroup, lastErr)
}

// candidateBases: the own cgroup first when it is not the root and is
// writable, then the hierarchy root.
func candidateBases(h hierarchy) []string {
	var out []string
	if h.own != "/" && unix.Access(filepath.Join(h.mount, h.own), unix.W_OK) == nil {
		out = append(out, h.own)
	}
	return append(out, "/")
}

func createAt(h hierarchy, base string, opts Options) (*Group, []string, error) {
	g := &Group{version: h.version, mount: h.mount, rel: filepath.Join(base, "torchmem", opts.Name), write: opts.write}
	ok := false
	defer func() {
		if !ok {
			g.undo()
		}
	}()
	if h.version == 2 {
		if err := g.makeV2(base); err != nil {
			return nil, nil, err
		}
	} else if err := g.makeV1(h.freezer); err != nil {
		return nil, nil, err
	}
	notes, err := g.SetLimits(opts.Limits)
	if err != nil {
		return nil, nil, err
	}
	ok = true
	return g, notes, nil
}

// mkdir creates dir and records it for undo; an existing parent is fine.
func (g *Group) mkdir(dir string, mustBeNew bool) error {
	err := os.Mkdir(dir, 0o755)
	if errors.Is(err, os.ErrExist) && !mustBeNew {
		return nil
	}
	if err != nil {
		return err // a *PathError: "mkdir DIR: permission denied"
	}
	g.createdUp = append(g.createdUp, dir)
	return nil
}

// undo removes, newest first, the directories this Group created.
func (g *Group) undo() {
	if g.movedFrom != "" {
		_ = g.wr(filepath.Join(g.movedFrom, "cgroup.procs"), strconv.Itoa(os.Getpid()))
		g.movedFrom = ""
	}
	for i := len(g.createdUp) - 1; i >= 0; i-- {
		_ = os.Remove(g.createdUp[i])
	}
	g.createdUp = nil
}

func (g *Group) makeV1(freezerMount string) error {
	parent := filepath.Dir(g.Dir())
	if err := g.mkdir(parent, false); err != nil {
		return err
	}
	sweepEmpty(parent, time.Now())
	if err := g.mkdir(g.Dir(), true); err != nil {
		return err
	}
	if freezerMount == "" {
		return nil
	}
	// The freezer makes kill atomic against forking workers; without it,
	// Kill falls back to repeated SIGKILL sweeps.
	// The freezer hierarchy need not mirror the memory one (torchmem's own
	// memory group may not exist there), so its twin lives at the root.
	fz := filepath.Join(freezerMount, "torchmem", filepath.Base(g.rel))
	if g.mkdir(filepath.Dir(fz), false) == nil {
		sweepEmpty(filepath.Dir(fz), time.Now())
	}
	if g.mkdir(fz, true) == nil {
		g.freezer = fz
	}
	return nil
}

func (g *Group) makeV2(base string) error {
	baseDir := filepath.Join(g.mount, base)
	parent := filepath.Dir(g.Dir())
	// A delegated group that still holds processes cannot enable
	// controllers for children (EBUSY): the caller then falls back to root.
	if err := g.enableMemory(baseDir); err != nil {
		if !errors.Is(err, unix.EBUSY) || base == "/" {
			return err
		}
		if err := g.enableFromLeaf(baseDir); err != nil {
			return err
		}
	}
	if err := g.mkdir(parent, false); err != nil {
		return err
	}
	sweepEmpty(parent, time.Now())
	if err := g.enableMemory(parent); err != nil {
		return err
	}
	return g.mkdir(g.Dir(), true)
}

func (g *Group) enableMemory(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if err == nil && slices.Contains(strings.Fields(string(b)), "memory") {
		return nil
	}
	return g.wr(filepath.Join(dir, "cgroup.subtree_control"), "+memory")
}

// detect finds the memory hierarchy from ProcRoot/self/mountinfo and this
// process's place in it from ProcRoot/self/cgroup.
func detect(procRoot string) (hierarchy, error) {
	mi, err := os.Open(filepath.Join(procRoot, "self", "mountinfo"))
	if err != nil {
		return hierarchy{}, fmt.Errorf("%w: open mountinfo: %v", ErrNoCgroup, err)
	}
	defer mi.Close()
	h, err := parseMountinfo(mi)
	if err != nil {
		return h, err
	}
	cg, err := os.ReadFile(filepath.Join(procRoot, "self", "cgroup"))
	if err != nil {
		return h, fmt.Errorf("%w: read %s/self/cgroup: %v", ErrNoCgroup, procRoot, err)
	}
	h.own = ownCgroup(string(cg), h)
	return h, nil
}

// parseMountinfo picks the v1 memory mount when there is one (v1 and
// hybrid hosts), else the cgroup2 mount (v2 hosts). A freezer co-mounted
// with memory is not used as a separate freezer.
func parseMountinfo(r io.Reader) (hierarchy, error) {
	ch, err := cgroup.ParseMountinfo(r)
	if err != nil {
		return hierarchy{}, fmt.Errorf("%w: mountinfo: %v", ErrNoCgroup, err)
	}
	switch {
	case ch.MemoryV1 != nil:
		h := hierarchy{version: 1, mount: ch.MemoryV1.Point, mountRoot: ch.MemoryV1.Root}
		if ch.FreezerV1 != nil && ch.FreezerV1.Point != h.mount {
			h.freezer = ch.FreezerV1.Point
		}
		return h, nil
	case ch.Unified != nil:
		return hierarchy{version: 2, mount: ch.Unified.Point, mountRoot: ch.Unified.Root}, nil
	}
	return hierarchy{}, fmt.Errorf("%w: no memory cgroup mount in mountinfo", ErrNoCgroup)
}

// ownCgroup returns this process's cgroup relative to the mount, "/" when
// /proc/self/cgroup has no line for the hierarchy h uses.
func ownCgroup(s string, h hierarchy) string {
	p, err := cgroup.ParseProcessPath(s)
	if err != nil || p.V2 != (h.version == 2) {
		return "/"
	}
	rel := p.Path
	if h.mountRoot != "/" && strings.HasPrefix(rel, h.mountRoot) {
		rel = strings.TrimPrefix(rel, h.mountRoot)
	}
	return filepath.Clean("/" + rel)
}
