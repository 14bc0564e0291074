package jobcgroup

import (
	"os"
	"strconv"
)

// SetLimits writes the limits that are set. Notices explain settings the
// hierarchy cannot express exactly.
func (g *Group) SetLimits(l Limits) ([]string, error) {
	if g.version == 2 {
		return nil, g.setLimitsV2(l)
	}
	return g.setLimitsV1(l)
}

func (g *Group) setLimitsV2(l Limits) error {
	for _, s := range []struct {
		file string
		v    *int64
	}{{"memory.max", l.MemoryMax}, {"memory.high", l.MemoryHigh}, {"memory.swap.max", l.SwapMax}} {
		if s.v == nil {
			continue
		}
		if err := writeFile(g.file(s.file), strconv.FormatInt(*s.v, 10)); err != nil {
			return err
		}
	}
	return nil
}

func (g *Group) setLimitsV1(l Limits) ([]string, error) {
	var notes []string
	if l.MemoryMax != nil {
		if err := writeFile(g.file("memory.limit_in_bytes"), strconv.FormatInt(*l.MemoryMax, 10)); err != nil {
			return nil, err
		}
	}
	if l.MemoryHigh != nil {
		notes = append(notes, "cgroup v1 has no memory.high: --memory-high set as memory.soft_limit_in_bytes (reclaimed first under host pressure, never throttled)")
		if err := writeFile(g.file("memory.soft_limit_in_bytes"), strconv.FormatInt(*l.MemoryHigh, 10)); err != nil {
			return nil, err
		}
	}
	if l.SwapMax != nil {
		n, err := g.swapV1(l)
		if err != nil {
			return nil, err
		}
		notes = append(notes, n...)
	}
	return notes, nil
}

// swapV1: v1 limits memory+swap together in memory.memsw.limit_in_bytes,
// which exists only with swap accounting on (swapaccount=1).
func (g *Group) swapV1(l Limits) ([]string, error) {
	path := g.file("memory.memsw.limit_in_bytes")
	if _, err := os.Stat(path); err != nil {
		return []string{"swap accounting is off on this kernel (no memory.memsw.*): --swap-max ignored"}, nil
	}
	if l.MemoryMax == nil {
		return []string{"cgroup v1 limits memory+swap together: --swap-max needs --memory-max, ignored"}, nil
	}
	return nil, writeFile(path, strconv.FormatInt(*l.MemoryMax+*l.SwapMax, 10))
}

// Limit returns the group's hard limit in bytes, nil when unlimited.
func (g *Group) Limit() *int64 {
	name := "memory.max"
	if g.version == 1 {
		name = "memory.limit_in_bytes"
	}
	v, err := readInt(g.file(name))
	// v1 spells "unlimited" as a page-rounded LLONG_MAX.
	if err != nil || v < 0 || v >= 1<<62 {
		return nil
	}
	return &v
}

// MinMemory is the smallest memory limit a job can start in. Measured on
// Debian 12 (cgroup v1): torchmem's trampoline is charged ~3 MiB once it is
// in the group and a bare python3 with the hook needs 5-8 MiB to reach its
// first line (at 4 MiB it is OOM-killed before it starts, and the
// post-mortem then blames the job). 32 MiB leaves room for the
// interpreter's own growth; importing torch needs ~250 MiB more, which is
// the job's business.
const MinMemory = 32 << 20
