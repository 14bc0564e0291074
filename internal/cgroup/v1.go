package cgroup

import (
	"fmt"
	"path/filepath"
)

// readV1 reads memory.{usage_in_bytes,limit_in_bytes,max_usage_in_bytes,
// memsw.*,failcnt,oom_control}. v1 has no high limit and no pressure file.
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
	memsw, err := optUint(dir, "memory.memsw.usage_in_bytes")
	if err != nil {
		return m, err
	}
	if memsw != nil {
		swap := uint64(0)
		if *memsw > m.UsageBytes {
			swap = *memsw - m.UsageBytes
		}
		m.SwapBytes = &swap
	}
	m.Events, err = readEventsV1(dir)
	return m, err
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
