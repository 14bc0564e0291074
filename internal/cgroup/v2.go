package cgroup

import (
	"fmt"
	"path/filepath"

	"github.com/torchmem/torchmem/internal/procfs/psi"
)

// readV2 reads memory.{current,max,high,peak,swap.current,swap.max,events,pressure}.
func readV2(dir string) (Memory, error) {
	m := Memory{Dir: dir, Version: 2}
	var err error
	if m.UsageBytes, err = mustUint(dir, "memory.current"); err != nil {
		return m, err
	}
	max, err := optLimit(dir, "memory.max")
	if err != nil {
		return m, err
	}
	if max == nil { // the root group has no memory.max
		max = &Limit{Unlimited: true}
	}
	m.Max = *max
	if m.High, err = optLimit(dir, "memory.high"); err != nil {
		return m, err
	}
	if m.SwapMax, err = optLimit(dir, "memory.swap.max"); err != nil {
		return m, err
	}
	if m.PeakBytes, err = optUint(dir, "memory.peak"); err != nil {
		return m, err
	}
	if m.SwapBytes, err = optUint(dir, "memory.swap.current"); err != nil {
		return m, err
	}
	if m.Events, err = readEventsV2(dir); err != nil {
		return m, err
	}
	m.Pressure, err = ReadPressure(dir)
	return m, err
}

func readEventsV2(dir string) (Events, error) {
	s, ok, err := readFile(dir, "memory.events")
	if err != nil || !ok {
		return Events{Source: "memory.events"}, err
	}
	kv, err := parseKeyValues(s)
	if err != nil {
		return Events{}, fmt.Errorf("parse %s: %w", filepath.Join(dir, "memory.events"), err)
	}
	return eventsV2(kv), nil
}

// ReadPressure reads a v2 group directory's memory.pressure; it returns nil when the kernel has no PSI (file missing) or has
// it off (reading fails with EOPNOTSUPP): a state, not an error.
func ReadPressure(dir string) (*PSI, error) {
	s, ok, err := readFile(dir, "memory.pressure")
	if err != nil || !ok {
		return nil, nil //nolint:nilerr // PSI switched off reads as an error: not ours to report
	}
	p, err := psi.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", filepath.Join(dir, "memory.pressure"), err)
	}
	return &p, nil
}
