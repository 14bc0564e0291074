package procfs

// /proc/meminfo, read through prometheus/procfs:
//
//	MemTotal:       2113626256 kB
//	MemFree:        2076189660 kB
//	MemAvailable:   2086036316 kB
//	...

import "fmt"

// Meminfo is the host memory from /proc/meminfo, in bytes. A field the
// kernel did not print is nil (MemAvailable is missing before 3.14).
type Meminfo struct {
	MemTotalBytes      *uint64 `json:"mem_total_bytes,omitempty"`
	MemFreeBytes       *uint64 `json:"mem_free_bytes,omitempty"`
	MemAvailableBytes  *uint64 `json:"mem_available_bytes,omitempty"`
	BuffersBytes       *uint64 `json:"buffers_bytes,omitempty"`
	CachedBytes        *uint64 `json:"cached_bytes,omitempty"`
	ShmemBytes         *uint64 `json:"shmem_bytes,omitempty"`
	SwapTotalBytes     *uint64 `json:"swap_total_bytes,omitempty"`
	SwapFreeBytes      *uint64 `json:"swap_free_bytes,omitempty"`
	DirtyBytes         *uint64 `json:"dirty_bytes,omitempty"`
	AnonHugePagesBytes *uint64 `json:"anon_huge_pages_bytes,omitempty"`
	CommittedASBytes   *uint64 `json:"committed_as_bytes,omitempty"`
	CommitLimitBytes   *uint64 `json:"commit_limit_bytes,omitempty"`
	HugePagesTotal     *uint64 `json:"huge_pages_total,omitempty"`
	HugePagesFree      *uint64 `json:"huge_pages_free,omitempty"`
	HugepagesizeBytes  *uint64 `json:"hugepagesize_bytes,omitempty"`
}

// Meminfo reads <root>/meminfo.
func (f FS) Meminfo() (Meminfo, error) {
	m, err := f.prom.Meminfo()
	if err != nil {
		return Meminfo{}, fmt.Errorf("read %s: %w", f.path("meminfo"), err)
	}
	return Meminfo{
		MemTotalBytes:      m.MemTotalBytes,
		MemFreeBytes:       m.MemFreeBytes,
		MemAvailableBytes:  m.MemAvailableBytes,
		BuffersBytes:       m.BuffersBytes,
		CachedBytes:        m.CachedBytes,
		ShmemBytes:         m.ShmemBytes,
		SwapTotalBytes:     m.SwapTotalBytes,
		SwapFreeBytes:      m.SwapFreeBytes,
		DirtyBytes:         m.DirtyBytes,
		AnonHugePagesBytes: m.AnonHugePagesBytes,
		CommittedASBytes:   m.CommittedASBytes,
		CommitLimitBytes:   m.CommitLimitBytes,
		HugePagesTotal:     m.HugePagesTotal,
		HugePagesFree:      m.HugePagesFree,
		HugepagesizeBytes:  m.HugepagesizeBytes,
	}, nil
}
