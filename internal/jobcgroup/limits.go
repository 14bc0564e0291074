package jobcgroup

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// readEventsV2 reads memory.events:
//
//	low 0
//	high 12
//	max 40
//	oom 1
//	oom_kill 1
//	oom_group_kill 0
func readEventsV2(path string) (Events, error) {
	f, err := os.Open(path)
	if err != nil {
		return Events{}, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	kv, err := parseKV(f)
	if err != nil {
		return Events{}, fmt.Errorf("parse %s: %w", path, err)
	}
	return Events{Max: kv["max"], High: kv["high"], OOM: kv["oom"], OOMKill: kv["oom_kill"]}, nil
}

// readEventsV1 reads memory.oom_control and memory.failcnt:
//
//	oom_kill_disable 0
//	under_oom 0
//	oom_kill 1
func readEventsV1(dir string) (Events, error) {
	path := filepath.Join(dir, "memory.oom_control")
	f, err := os.Open(path)
	if err != nil {
		return Events{}, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	kv, err := parseKV(f)
	if err != nil {
		return Events{}, fmt.Errorf("parse %s: %w", path, err)
	}
	ev := Events{OOMKill: kv["oom_kill"], UnderOOM: kv["under_oom"]}
	if n, err := readInt(filepath.Join(dir, "memory.failcnt")); err == nil {
		ev.Max = &n
	}
	return ev, nil
}

// parseKV parses "key value" lines; a line that is not two fields with a
// numeric value is an error naming the line.
func parseKV(r io.Reader) (map[string]*int64, error) {
	out := map[string]*int64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("bad line %q", line)
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("bad value in line %q", line)
		}
		out[f[0]] = &n
	}
	return out, sc.Err()
}
