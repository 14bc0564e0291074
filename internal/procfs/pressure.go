package procfs

// /proc/pressure/memory (kernel >= 4.20 with PSI enabled):
//
//	some avg10=0.00 avg60=0.00 avg300=0.00 total=0
//	full avg10=0.00 avg60=0.00 avg300=0.00 total=0
//
// Parsed by internal/procfs/psi, the one parser of this format: a cgroup v2
// group's memory.pressure has the same text, and prometheus/procfs reads
// only the /proc file.

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/torchmem/torchmem/internal/procfs/psi"
)

// PSILine is one line of a pressure file (see psi.Line).
type PSILine = psi.Line

// PSI is pressure stall information: Some is time at least one task
// stalled on memory, Full is time all non-idle tasks stalled. Full is nil
// where the kernel does not print it.
type PSI = psi.Stats

// MemoryPressure reads <root>/pressure/memory. It returns ErrNotPresent when
// the kernel has no PSI (file missing) or has it switched off (EOPNOTSUPP,
// RHEL 8 without psi=1).
func (f FS) MemoryPressure() (PSI, error) {
	path := f.path("pressure", "memory")
	var p PSI
	err := withFile(path, func(b []byte) error {
		var perr error
		if p, perr = psi.Parse(string(b)); perr != nil {
			return fmt.Errorf("parse %s: %w", path, perr)
		}
		return nil
	})
	if err != nil && (IsVanished(err) || errors.Is(err, syscall.EOPNOTSUPP)) {
		return PSI{}, fmt.Errorf("%s: %w", path, ErrNotPresent)
	}
	return p, err
}
