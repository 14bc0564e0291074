package cgroup

// memory.pressure (v2 with PSI) has the text of /proc/pressure/memory and is
// parsed by internal/procfs/psi, the one parser of that format (a pure
// parser, not a reader: this leaf still reads its own files).

import "github.com/torchmem/torchmem/internal/procfs/psi"

// PSILine is one line of a pressure file (see psi.Line).
type PSILine = psi.Line

// PSI is a group's memory pressure: Some (at least one task stalled) and
// Full (all tasks stalled).
type PSI = psi.Stats
