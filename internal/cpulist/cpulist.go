// Package cpulist parses the kernel's CPU list format, as found in sysfs
// (`/sys/bus/pci/devices/<id>/local_cpulist`, `/sys/devices/system/node/
// nodeN/cpulist`) and in /proc/<pid>/status (Cpus_allowed_list):
//
//	0-3,8,10-11
//
// One parser for the GPU source, the doctor's NUMA checks and the run
// supervisor's NUMA binding.
package cpulist

import (
	"fmt"
	"strconv"
	"strings"
)

// Max bounds how many CPUs a list may name, so a corrupt or hostile file
// cannot make a caller allocate without bound; no machine has more.
const Max = 1 << 16

// Parse returns the CPUs s names, in the order written. Surrounding space is
// ignored; "" is no CPUs. A malformed element, a reversed or negative range,
// or more than Max CPUs in all is an error naming s.
func Parse(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("cpu list %q: bad cpu %q", s, lo)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("cpu list %q: bad range %q", s, part)
			}
		}
		if b-a >= Max-len(cpus) {
			return nil, fmt.Errorf("cpu list %q: more than %d cpus", s, Max)
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}
