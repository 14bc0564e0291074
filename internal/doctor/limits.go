package doctor

import "github.com/torchmem/torchmem/internal/procfs"

type limitsResult struct {
	m     procfs.Limits
	shown string
	err   error
}

// limits reads <ProcRoot>/self/limits with procfs's reader: the limits
// this shell hands to the jobs it starts.
func (h *Host) limits() limitsResult {
	return memo(h, "limits", func() limitsResult {
		const shown = "/proc/self/limits"
		fs, err := h.procFS()
		if err != nil {
			return limitsResult{shown: shown, err: err}
		}
		m, err := fs.SelfLimits()
		return limitsResult{m, shown, err}
	})
}
