package oomexplain

import (
	"github.com/torchmem/torchmem/internal/units"
)

// CopyOnRead is DataLoader workers whose private memory (USS, from
// smaps_rollup) grew while their parent's did not: the workers touch the
// dataset the parent built before forking them (a Python list of objects,
// a dict of numpy arrays), each touch writes the object's reference count,
// and the kernel copies every page written. Every worker ends up with a
// private copy of what it read, so the job needs (workers + 1) × the
// dataset. The supervisor measures it (internal/supervisor, copyonread.go).
type CopyOnRead struct {
	// Workers is how many workers grew; Measured how many were read at
	// least twice (the others lived between two PSS reads).
	Workers  int `json:"workers"`
	Measured int `json:"measured"`
	// MedianGrowthBytes is the median USS growth of the workers that grew,
	// TotalGrowthBytes their sum.
	MedianGrowthBytes int64 `json:"median_growth_bytes"`
	TotalGrowthBytes  int64 `json:"total_growth_bytes"`
	// ParentGrowthBytes is the largest USS growth of a worker's parent over
	// that worker's life.
	ParentGrowthBytes int64 `json:"parent_growth_bytes"`
	// PerWorker is each measured worker, largest growth first (at most
	// MaxCopyOnReadRows).
	PerWorker []WorkerGrowth `json:"per_worker"`
}

// MaxCopyOnReadRows bounds CopyOnRead.PerWorker: workers restart every
// epoch, so a long run has thousands.
const MaxCopyOnReadRows = 64

// WorkerGrowth is one DataLoader worker's private memory at its first and
// last PSS read, and its parent's at the same reads.
type WorkerGrowth struct {
	PID            int     `json:"pid"`
	ParentPID      int     `json:"parent_pid"`
	FirstUSS       int64   `json:"first_uss"`
	LastUSS        int64   `json:"last_uss"`
	ParentFirstUSS int64   `json:"parent_first_uss"`
	ParentLastUSS  int64   `json:"parent_last_uss"`
	Seconds        float64 `json:"seconds"`
	// Grew: this worker counts as copying on read.
	Grew bool `json:"grew"`
}

// Growth is the worker's USS growth between its first and last read.
func (w WorkerGrowth) Growth() int64 { return w.LastUSS - w.FirstUSS }

// ParentGrowth is the parent's USS growth over the worker's life.
func (w WorkerGrowth) ParentGrowth() int64 { return w.ParentLastUSS - w.ParentFirstUSS }

// copyOnReadAdvice is the fix for workers that copy the dataset, whatever
// ended the run: it costs memory in every run, not only in one killed.
func copyOnReadAdvice(ev RunEvidence) []string {
	c := ev.CopyOnRead
	if c == nil || c.Workers == 0 {
		return nil
	}
	return []string{render(ev.Lang, msg("run.advice.copy_on_read", itoa(c.Workers), itoa(c.Measured),
		units.Bytes(c.MedianGrowthBytes), units.Bytes(c.TotalGrowthBytes), units.Bytes(c.ParentGrowthBytes)))}
}
