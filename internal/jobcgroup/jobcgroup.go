// Package jobcgroup creates, limits, watches, kills and removes the memory
// cgroup that one supervised job runs in, on cgroup v1 and v2. Reading other
// cgroups (limits, usage, events of whatever a process is in) is the job of
// internal/cgroup; this package only manages the group torchmem makes.
//
// Where the group goes: under the cgroup torchmem itself runs in when that
// one is delegated and writable (a Slurm step, a systemd user slice, a
// container with its own cgroup namespace), otherwise under a "torchmem"
// group at the hierarchy root. The layout is <base>/torchmem/<name>.
//
// Why the cgroup files are written directly rather than through
// containerd/cgroups/v3 (DESIGN.md's first choice): the job's needs are a
// handful of kernel files (limits, procs, events, usage-threshold eventfds,
// cgroup.kill or a v1 freezer twin for an atomic kill, delegation checks),
// and writing them here lets the very same code run over fixture trees in
// tests, with every root injected, on both v1 and v2.
package jobcgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/torchmem/torchmem/internal/cgroup"
)

// ErrNoCgroup means no writable memory cgroup hierarchy was found; the
// caller runs the job monitor-only.
var ErrNoCgroup = errors.New("no writable memory cgroup")

// Limits are the memory limits of the job's group. Nil means "not set".
type Limits struct {
	// MemoryMax: v2 memory.max, v1 memory.limit_in_bytes.
	MemoryMax *int64
	// MemoryHigh: v2 memory.high (throttle and reclaim above it); v1 has no
	// equivalent, so it becomes memory.soft_limit_in_bytes there.
	MemoryHigh *int64
	// SwapMax: v2 memory.swap.max; v1 memory.memsw.limit_in_bytes is set to
	// MemoryMax+SwapMax (v1 limits memory+swap together).
	SwapMax *int64
}

// Options says where and how to create the group.
type Options struct {
	// ProcRoot and the mount points found in ProcRoot/self/mountinfo locate
	// the hierarchy.
	ProcRoot string
	// Name of the job's group, e.g. "run-20260101-120000-1234".
	Name   string
	Limits Limits

	// write replaces writeFile for the create path (tests fake EBUSY).
	write func(path, v string) error
}

// Event is one notification from Watch.
type Event struct {
	Time time.Time
	// Kind is "oom" (v1 oom_control eventfd), "threshold" (v1 usage
	// threshold eventfd) or "events" (v2 memory.events changed).
	Kind string
	// Threshold is the crossed usage in bytes when Kind is "threshold".
	Threshold int64
}

// Group is a job cgroup made by Create.
type Group struct {
	version   int
	mount     string // hierarchy mount point (the memory one on v1)
	rel       string // path of the group relative to the mount, "/..."
	freezer   string // v1 freezer group dir, "" when none
	createdUp []string
	movedFrom string // v2: the group torchmem moved itself out of (undo)
	write     func(path, v string) error
}

func (g *Group) wr(path, v string) error {
	if g.write != nil {
		return g.write(path, v)
	}
	return writeFile(path, v)
}

// Dir returns the group's directory (the memory controller's on v1).
func (g *Group) Dir() string { return filepath.Join(g.mount, g.rel) }

// Path returns the group's path relative to the hierarchy root, as
// /proc/PID/cgroup shows it.
func (g *Group) Path() string { return g.rel }

func (g *Group) file(name string) string { return filepath.Join(g.Dir(), name) }

// Add moves pid into the group (and into the v1 freezer group).
func (g *Group) Add(pid int) error {
	if err := writeFile(g.file("cgroup.procs"), strconv.Itoa(pid)); err != nil {
		return err
	}
	if g.freezer != "" {
		return writeFile(filepath.Join(g.freezer, "cgroup.procs"), strconv.Itoa(pid))
	}
	return nil
}

// Procs returns the PIDs in the group (cgroup.procs).
func (g *Group) Procs() ([]int, error) {
	b, err := os.ReadFile(g.file("cgroup.procs"))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", g.file("cgroup.procs"), err)
	}
	return parsePids(string(b)), nil
}

// Usage returns the group's charged memory in bytes (v2 memory.current,
// v1 memory.usage_in_bytes).
func (g *Group) Usage() (int64, error) {
	name := "memory.current"
	if g.version == 1 {
		name = "memory.usage_in_bytes"
	}
	return readInt(g.file(name))
}

// Peak returns the group's high-water mark in bytes (v1
// memory.max_usage_in_bytes, v2 memory.peak on kernels >= 5.19); nil when
// the kernel does not keep one.
func (g *Group) Peak() *int64 {
	name := "memory.peak"
	if g.version == 1 {
		name = "memory.max_usage_in_bytes"
	}
	v, err := readInt(g.file(name))
	if err != nil {
		return nil
	}
	return &v
}

// Events reads the group's memory event counters (v2 memory.events, v1
// memory.oom_control and memory.failcnt) with internal/cgroup's reader,
// whose type is the one for these counters.
func (g *Group) Events() (cgroup.Events, error) {
	ev, err := cgroup.ReadEvents(g.Dir(), g.version == 2)
	if err != nil {
		return cgroup.Events{}, err
	}
	counters := ev
	counters.Source = ""
	if counters == (cgroup.Events{}) {
		// No counter at all: the file is missing, not a group without events.
		return cgroup.Events{}, fmt.Errorf("read %s: no memory event counters", g.Dir())
	}
	return ev, nil
}

func parsePids(s string) []int {
	var out []int
	for _, f := range strings.Fields(s) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return -1, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parse %s: %w", path, err)
	}
	return n, nil
}

func writeFile(path, v string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	_, err = f.WriteString(v)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %q to %s: %w", v, path, err)
	}
	return nil
}
