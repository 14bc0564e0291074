package cgroup

// memory.pressure (v2 with PSI), the format of /proc/pressure/memory:
//
//	some avg10=0.00 avg60=0.00 avg300=0.00 total=202
//	full avg10=0.00 avg60=0.00 avg300=0.00 total=202
//
// Parsed here rather than through internal/procfs: leaf readers do not
// import each other.

import (
	"fmt"
	"strconv"
	"strings"
)

// PSILine is one line of a pressure file: averages are percentages of wall
// time; TotalMicros is the cumulative stall time in microseconds.
type PSILine struct {
	Avg10       float64 `json:"avg10"`
	Avg60       float64 `json:"avg60"`
	Avg300      float64 `json:"avg300"`
	TotalMicros uint64  `json:"total_us"`
}

// PSI is a group's memory pressure: Some (at least one task stalled) and
// Full (all tasks stalled).
type PSI struct {
	Some *PSILine `json:"some,omitempty"`
	Full *PSILine `json:"full,omitempty"`
}

func parsePSI(s string) (PSI, error) {
	var p PSI
	for _, line := range strings.Split(s, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		l, err := parsePSILine(fields[1:])
		if err != nil {
			return PSI{}, fmt.Errorf("line %q: %w", line, err)
		}
		switch fields[0] {
		case "some":
			p.Some = l
		case "full":
			p.Full = l
		default:
			return PSI{}, fmt.Errorf("line %q: want some or full", line)
		}
	}
	return p, nil
}

func parsePSILine(fields []string) (*PSILine, error) {
	var l PSILine
	seen := 0
	for _, f := range fields {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return nil, fmt.Errorf("field %q: want key=value", f)
		}
		var err error
		switch k {
		case "avg10":
			l.Avg10, err = strconv.ParseFloat(v, 64)
		case "avg60":
			l.Avg60, err = strconv.ParseFloat(v, 64)
		case "avg300":
			l.Avg300, err = strconv.ParseFloat(v, 64)
		case "total":
			l.TotalMicros, err = strconv.ParseUint(v, 10, 64)
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("field %q: bad number", f)
		}
		seen++
	}
	if seen < 4 {
		return nil, fmt.Errorf("want avg10, avg60, avg300 and total")
	}
	return &l, nil
}
