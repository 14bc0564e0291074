package procfs

// /proc/pressure/memory (kernel >= 4.20 with PSI enabled), read through
// prometheus/procfs:
//
//	some avg10=0.00 avg60=0.00 avg300=0.00 total=0
//	full avg10=0.00 avg60=0.00 avg300=0.00 total=0

import (
	"errors"
	"fmt"
	"syscall"

	prom "github.com/prometheus/procfs"
)

// PSILine is one line of a pressure file: averages are percentages of wall
// time over 10, 60 and 300 s; TotalMicros is the cumulative stall time.
type PSILine struct {
	Avg10       float64 `json:"avg10"`
	Avg60       float64 `json:"avg60"`
	Avg300      float64 `json:"avg300"`
	TotalMicros uint64  `json:"total_us"`
}

// PSI is pressure stall information: Some is time at least one task
// stalled on memory, Full is time all non-idle tasks stalled. Full is nil
// where the kernel does not print it.
type PSI struct {
	Some *PSILine `json:"some,omitempty"`
	Full *PSILine `json:"full,omitempty"`
}

// MemoryPressure reads <root>/pressure/memory. It returns ErrNotPresent when
// the kernel has no PSI (file missing) or has it switched off (EOPNOTSUPP,
// RHEL 8 without psi=1).
func (f FS) MemoryPressure() (PSI, error) {
	p, err := f.prom.PSIStatsForResource("memory")
	if err != nil {
		if IsVanished(err) || errors.Is(err, syscall.EOPNOTSUPP) {
			return PSI{}, fmt.Errorf("%s: %w", f.path("pressure", "memory"), ErrNotPresent)
		}
		return PSI{}, fmt.Errorf("read %s: %w", f.path("pressure", "memory"), err)
	}
	return PSI{Some: convPSI(p.Some), Full: convPSI(p.Full)}, nil
}

func convPSI(l *prom.PSILine) *PSILine {
	if l == nil {
		return nil
	}
	return &PSILine{Avg10: l.Avg10, Avg60: l.Avg60, Avg300: l.Avg300, TotalMicros: l.Total}
}
