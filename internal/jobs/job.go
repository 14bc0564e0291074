package jobs

import (
	"strings"

	"github.com/torchmem/torchmem/internal/textwrap"
)

// Sources of the numbers, as shown beside them.
const (
	SourceStatus      = "status"       // /proc/<pid>/status (VmRSS, RssAnon, VmSwap)
	SourceSmapsRollup = "smaps_rollup" // /proc/<pid>/smaps_rollup
	SourceSmaps       = "smaps"        // summed /proc/<pid>/smaps (kernels < 4.14)
)

// Process is one member of a job with its memory figures. A nil figure was
// not read (PSS not sampled yet, no GPU backend) or not provided.
type Process struct {
	PID     int      `json:"pid"`
	PPid    int      `json:"ppid"`
	Name    string   `json:"name"`
	Cmdline []string `json:"cmdline"`
	Role    string   `json:"role"`
	Depth   int      `json:"depth"`
	Torch   bool     `json:"torch"`
	UID     int      `json:"uid"`
	// From /proc/<pid>/status (fast tier).
	RSSBytes      *uint64 `json:"rss_bytes,omitempty"`
	RSSAnonBytes  *uint64 `json:"rss_anon_bytes,omitempty"`
	RSSFileBytes  *uint64 `json:"rss_file_bytes,omitempty"`
	RSSShmemBytes *uint64 `json:"rss_shmem_bytes,omitempty"`
	SwapBytes     *uint64 `json:"swap_bytes,omitempty"`
	// From smaps_rollup (PSS tier): PSSSource says which file; PSSAgeSeconds
	// how old the figures are at the sample's time.
	PSSBytes *uint64 `json:"pss_bytes,omitempty"`
	USSBytes *uint64 `json:"uss_bytes,omitempty"`
	// PrivateDirtyBytes is the part of USS that was written (Private_Dirty):
	// anonymous memory and copy-on-write copies, not clean file pages.
	PrivateDirtyBytes *uint64  `json:"private_dirty_bytes,omitempty"`
	SwapPSSBytes      *uint64  `json:"swap_pss_bytes,omitempty"`
	PSSSource         string   `json:"pss_source,omitempty"`
	PSSAgeSeconds     *float64 `json:"pss_age_seconds,omitempty"`
	// From the GPU backend: bytes on all GPUs together and which GPUs.
	GPUBytes   *int64 `json:"gpu_bytes,omitempty"`
	GPUIndexes []int  `json:"gpu_indexes,omitempty"`
	// From /proc/<pid>/oom_score and oom_score_adj.
	OOMScore    *int `json:"oom_score,omitempty"`
	OOMScoreAdj *int `json:"oom_score_adj,omitempty"`
}

// Totals sums a job's members. PSSComplete is false when some member has
// no PSS yet (the sum then covers only those that have one).
type Totals struct {
	Processes   int    `json:"processes"`
	Workers     int    `json:"workers"`
	RSSBytes    uint64 `json:"rss_bytes"`
	PSSBytes    uint64 `json:"pss_bytes"`
	USSBytes    uint64 `json:"uss_bytes"`
	SwapBytes   uint64 `json:"swap_bytes"`
	GPUBytes    int64  `json:"gpu_bytes"`
	PSSComplete bool   `json:"pss_complete"`
	// PSSMaxAgeSeconds is the age of the oldest PSS figure in the sum.
	PSSMaxAgeSeconds float64 `json:"pss_max_age_seconds"`
	// Sources maps each total ("rss", "pss", "uss", "swap", "gpu") to where
	// its figures came from.
	Sources map[string]string `json:"sources"`
}

// Job is one PyTorch job: a tree of processes.
type Job struct {
	// ID is "pid:<root pid>", stable for the life of the root process.
	ID        string    `json:"id"`
	RootPID   int       `json:"root_pid"`
	Command   string    `json:"command"`
	Processes []Process `json:"processes"`
	Totals    Totals    `json:"totals"`
}

// Total fills j.Totals from the members; gpuSource names the GPU backend
// ("nvml", "nvidia-smi", "fake"), "" when there is none.
func (j *Job) Total(gpuSource string) {
	t := Totals{Processes: len(j.Processes), PSSComplete: true, Sources: map[string]string{
		"rss": SourceStatus, "swap": SourceStatus,
	}}
	for _, p := range j.Processes {
		if p.Role == RoleWorker {
			t.Workers++
		}
		t.RSSBytes += val(p.RSSBytes)
		t.SwapBytes += val(p.SwapBytes)
		if p.PSSBytes == nil {
			t.PSSComplete = false
		} else {
			t.PSSBytes += *p.PSSBytes
			t.USSBytes += val(p.USSBytes)
			t.Sources["pss"], t.Sources["uss"] = p.PSSSource, p.PSSSource
			if p.PSSAgeSeconds != nil && *p.PSSAgeSeconds > t.PSSMaxAgeSeconds {
				t.PSSMaxAgeSeconds = *p.PSSAgeSeconds
			}
		}
		if p.GPUBytes != nil {
			t.GPUBytes += *p.GPUBytes
		}
	}
	if gpuSource != "" && gpuSource != "none" {
		t.Sources["gpu"] = gpuSource
	}
	j.Totals = t
}

func val(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}

// CommandLine renders a command line for display, bounded in length.
func CommandLine(args []string, name string) string {
	if len(args) == 0 {
		return "[" + name + "]"
	}
	return textwrap.Cut(strings.Join(args, " "), 201) // 200 characters and the ellipsis
}
