package cgroup

import (
	"fmt"
	"path/filepath"
)

// readV1 reads memory.{usage_in_bytes,limit_in_bytes,max_usage_in_bytes,
// memsw.limit_in_bytes,stat,failcnt,oom_control}. v1 has no high limit and no pressure file.
func readV1(dir string) (Memory, error) {
	m := Memory{Dir: dir, Version: 1}
	var err error
	if m.UsageBytes, err = mustUint(dir, "memory.usage_in_bytes"); err != nil {
		return m, err
	}
	max, err := optLimit(dir, "memory.limit_in_bytes")
	if err != nil {
		return m, err
	}
	if max == nil {
		return m, fmt.Errorf("read %s: missing", filepath.Join(dir, "memory.limit_in_bytes"))
	}
	m.Max = *max
	if m.PeakBytes, err = optUint(dir, "memory.max_usage_in_bytes"); err != nil {
		return m, err
	}
	if m.SwapMax, err = optLimit(dir, "memory.memsw.limit_in_bytes"); err != nil {
		return m, err
	}
	m.SwapMaxIncludesMemory = m.SwapMax != nil
	if m.SwapBytes, err = swapV1(dir); err != nil {
		return m, err
	}
	m.Events, err = readEventsV1(dir)
	return m, err
}

// swapV1 takes the group's swap from memory.stat (total_swap, present with
// swap accounting): memsw.usage minus usage would mix two instants.
func swapV1(dir string) (*uint64, error) {
	s, ok, err := readFile(dir, "memory.stat")
	if err != nil || !ok {
		return nil, err
	}
	kv, err := parseKeyValues(s)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", filepath.Join(dir, "memory.stat"), err)
	}
	if v, ok := kv["total_swap"]; ok {
		return &v, nil
	}
	return ptr(kv, "swap"), nil
}

func readEventsV1(dir string) (Events, error) {
	failcnt, err := optUint(dir, "memory.failcnt")
	if err != nil {
		return Events{}, err
	}
	kv := map[string]uint64{}
	s, ok, err := readFile(dir, "memory.oom_control")
	if err != nil {
		return Events{}, err
	}
	if ok {
		if kv, err = parseKeyValues(s); err != nil {
			return Events{}, fmt.Errorf("parse %s: %w", filepath.Join(dir, "memory.oom_control"), err)
		}
	}
	return eventsV1(kv, failcnt), nil
}
