// Package psi parses pressure stall information, the text format the kernel
// (>= 4.20, CONFIG_PSI) writes both to /proc/pressure/<resource> and to a
// cgroup v2 group's <resource>.pressure:
//
//	some avg10=0.00 avg60=0.00 avg300=0.00 total=202
//	full avg10=0.00 avg60=0.00 avg300=0.00 total=202
//
// One parser for both readers (internal/procfs for the host,
// internal/cgroup for a group): prometheus/procfs reads only the /proc file,
// so the cgroup file needs a hand-written parser anyway, and two parsers of
// one format drift apart. It reads no file itself.
package psi

import (
	"fmt"
	"strconv"
	"strings"
)

// Line is one line of a pressure file: averages are percentages of wall
// time over 10, 60 and 300 s; TotalMicros is the cumulative stall time in
// microseconds.
type Line struct {
	Avg10       float64 `json:"avg10"`
	Avg60       float64 `json:"avg60"`
	Avg300      float64 `json:"avg300"`
	TotalMicros uint64  `json:"total_us"`
}

// Stats is one pressure file: Some is time at least one task stalled,
// Full is time all non-idle tasks stalled. A line the file does not have
// is nil (the cpu file of kernels before 5.13 has no "full").
type Stats struct {
	Some *Line `json:"some,omitempty"`
	Full *Line `json:"full,omitempty"`
}

// Parse reads the text of a pressure file. An error names the line and the
// field that is wrong; a file with no line at all is an error too.
func Parse(s string) (Stats, error) {
	var p Stats
	n := 0
	for _, line := range strings.Split(s, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		n++
		l, err := parseLine(fields[1:])
		if err != nil {
			return Stats{}, fmt.Errorf("line %q: %w", line, err)
		}
		switch fields[0] {
		case "some":
			p.Some = l
		case "full":
			p.Full = l
		default:
			return Stats{}, fmt.Errorf("line %q: want some or full", line)
		}
	}
	if n == 0 {
		return Stats{}, fmt.Errorf("empty pressure file")
	}
	return p, nil
}

func parseLine(fields []string) (*Line, error) {
	var l Line
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
			continue // a field a later kernel may add
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
