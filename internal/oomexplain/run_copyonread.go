package oomexplain

import (
	"github.com/torchmem/torchmem/internal/units"
)

// CopyOnRead is DataLoader workers whose written private memory grew
// while their parent's memory did not: the workers touch the dataset the
// parent built before forking them (a Python list of objects, a dict of
// numpy arrays), each touch writes the object's reference count, and the
// kernel copies every page written. Every worker ends up with a private
// copy of what it read, so the job needs (workers + 1) × the dataset. The
// supervisor measures it (internal/supervisor, copyonread.go): a worker's
// Private_Dirty from smaps_rollup (the copies are dirty; clean pages of a
// memory-mapped file are not copies), its parent's anonymous RSS from
// /proc/PID/status (which the children's copies do not change).
type CopyOnRead struct {
	// Workers is how many workers grew; Measured how many were read at
	// least twice (the others lived between two PSS reads).
	Workers  int `json:"workers"`
	Measured int `json:"measured"`
	// MedianGrowthBytes is the median private-memory growth of the workers
	// that grew, TotalGrowthBytes their sum.
	MedianGrowthBytes int64 `json:"median_growth_bytes"`
	TotalGrowthBytes  int64 `json:"total_growth_bytes"`
	// ParentGrowthBytes is the largest anonymous-RSS growth of a worker's
	// parent over that worker's life.
	ParentGrowthBytes int64 `json:"parent_growth_bytes"`
	// PerWorker is each measured worker, largest growth first (at most
	// MaxCopyOnReadRows).
	PerWorker []WorkerGrowth `json:"per_worker"`
}

// MaxCopyOnReadRows bounds CopyOnRead.PerWorker: workers restart every
// epoch, so a long run has thousands.
const MaxCopyOnReadRows = 64

// WorkerGrowth is one DataLoader worker's written private memory
// (Private_Dirty) at its first and last smaps_rollup read, and its
// parent's anonymous RSS at the same reads, in bytes.
type WorkerGrowth struct {
	PID             int     `json:"pid"`
	ParentPID       int     `json:"parent_pid"`
	FirstPrivate    int64   `json:"first_private_dirty"`
	LastPrivate     int64   `json:"last_private_dirty"`
	ParentFirstAnon int64   `json:"parent_first_rss_anon"`
	ParentLastAnon  int64   `json:"parent_last_rss_anon"`
	Seconds         float64 `json:"seconds"`
	// Grew: this worker counts as copying on read.
	Grew bool `json:"grew"`
}

// Growth is the worker's private-memory growth between its first and
// last read.
func (w WorkerGrowth) Growth() int64 { return w.LastPrivate - w.FirstPrivate }

// ParentGrowth is the parent's anonymous-RSS growth over the worker's life.
func (w WorkerGrowth) ParentGrowth() int64 { return w.ParentLastAnon - w.ParentFirstAnon }

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
