package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/torchmem/torchmem/internal/metrics"
	"github.com/torchmem/torchmem/internal/sample"
	"github.com/torchmem/torchmem/internal/store"
)

// Node is the answer of /api/v1/node and each event of the live stream.
type Node struct {
	Host            string  `json:"host"`
	Version         string  `json:"version"`
	IntervalSeconds float64 `json:"interval_seconds"`
	// Sample is the latest sample (schema: docs/top.md); nil when it
	// failed (SampleError says why).
	Sample      *sample.Sample `json:"sample"`
	SampleError string         `json:"sample_error,omitempty"`
	// History: a run history store is open; HistoryError its last error.
	History      bool   `json:"history"`
	HistoryError string `json:"history_error,omitempty"`
	// Runs are the running `torchmem run` jobs with their allocator figures.
	Runs []LiveRun `json:"runs"`
}

// LiveRun is a running run's newest figures, as the supervisor stored
// them (allocator figures come from the in-process hook).
type LiveRun struct {
	ID      string    `json:"id"`
	Job     string    `json:"job,omitempty"` // sampled job id ("pid:1234")
	Command []string  `json:"command"`
	Start   time.Time `json:"start"`
	// LastSample is the time of the newest stored sample.
	LastSample         *time.Time `json:"last_sample,omitempty"`
	AllocatedBytes     *int64     `json:"allocated_bytes,omitempty"`
	ReservedBytes      *int64     `json:"reserved_bytes,omitempty"`
	PeakAllocatedBytes *int64     `json:"peak_allocated_bytes,omitempty"`
	PeakReservedBytes  *int64     `json:"peak_reserved_bytes,omitempty"`
	Step               *int64     `json:"step,omitempty"`
	AllocRetries       *float64   `json:"alloc_retries,omitempty"`
	CUDAOOMs           int        `json:"cuda_ooms"`
	CgroupUsageBytes   *int64     `json:"cgroup_usage_bytes,omitempty"`
}

// Run samples every Interval until ctx is done. The first sample is
// taken at once.
func (s *Server) Run(ctx context.Context) {
	go s.watchOOM(ctx)
	tick, stop := s.ticker(s.cfg.Interval)
	defer stop()
	for {
		s.update(ctx)
		select {
		case <-ctx.Done():
			s.closeDB()
			return
		case <-tick:
		}
	}
}

// update takes one sample, reads the running runs, and publishes both.
func (s *Server) update(ctx context.Context) {
	smp, err := s.cfg.Sampler.Collect(ctx)
	if ctx.Err() != nil {
		return
	}
	st := &metrics.State{Sample: smp, SampleErr: err}
	if err != nil {
		st.Sample = nil
		s.logOnce(fmt.Sprintf("sample: %v", err))
	}
	if st.Sample != nil {
		// A kernel without the counter is normal; an unreadable vmstat is
		// reported once and leaves the counter out.
		var verr error
		if st.HostOOMKills, verr = s.procFS.OOMKills(); verr != nil {
			s.logOnce(verr.Error())
		}
	}
	st.Store, st.Runs, st.RunsErr = s.readRuns()
	s.oom.fill(st)
	metrics.MatchRuns(st.Sample, st.Runs, s.parent)
	n := &Node{Host: s.host, Version: s.cfg.Version, IntervalSeconds: s.cfg.Interval.Seconds(),
		Sample: st.Sample, History: st.Store, Runs: liveRuns(st.Runs)}
	if err != nil {
		n.SampleError = err.Error()
	}
	if st.RunsErr != nil {
		n.HistoryError = st.RunsErr.Error()
		s.logOnce(fmt.Sprintf("history: %v", st.RunsErr))
	}
	s.mu.Lock()
	s.state, s.node, s.nodeJSON = st, n, nil
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	s.markReady()
}

func (s *Server) procRoot() string {
	if s.cfg.ProcRoot == "" {
		return "/proc"
	}
	return s.cfg.ProcRoot
}

// parent returns pid's parent from <ProcRoot>/<pid>/status, 0 when the
// process is gone.
func (s *Server) parent(pid int) int {
	st, err := s.procFS.Status(pid)
	if err != nil {
		return 0
	}
	return st.PPid
}

// nodeBytes returns the latest node as JSON, encoded at most once per
// sample and only when someone asks, and the channel closed at the next.
func (s *Server) nodeBytes() ([]byte, chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.nodeJSON == nil && s.node != nil {
		b, err := json.Marshal(s.node)
		if err != nil { // cannot happen for these types
			s.cfg.Logf("encode node: %v", err)
		}
		s.nodeJSON = b
	}
	return s.nodeJSON, s.changed
}

// store returns the history store, opening it read-only once it exists.
func (s *Server) store() (*store.DB, error) {
	s.mu.RLock()
	db := s.db
	s.mu.RUnlock()
	if db != nil || s.cfg.DBPath == "" {
		return db, nil
	}
	if _, err := os.Stat(s.cfg.DBPath); errors.Is(err, fs.ErrNotExist) {
		return nil, nil // no run yet: history appears with the first `torchmem run`
	}
	db, err := store.Open(s.cfg.DBPath, store.Options{ReadOnly: true, Procs: s.procFS, Now: s.cfg.Now})
	if err != nil {
		return nil, fmt.Errorf("open history %s: %w", s.cfg.DBPath, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db != nil { // a concurrent request won
		db.Close()
		return s.db, nil
	}
	s.db = db
	return db, nil
}

func (s *Server) closeDB() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db != nil {
		s.db.Close()
		s.db = nil
	}
}

// readRuns lists running runs with their newest sample and OOM count.
func (s *Server) readRuns() (bool, []metrics.RunState, error) {
	db, err := s.store()
	if db == nil {
		return err != nil, nil, err
	}
	runs, err := db.Runs(store.RunFilter{Status: store.StatusRunning, Limit: 64})
	if err != nil {
		return true, nil, err
	}
	out := make([]metrics.RunState, 0, len(runs))
	for _, r := range runs {
		rs := metrics.RunState{Run: r}
		if r.LastSample != nil {
			smp, err := db.Samples(r.ID, *r.LastSample, time.Time{}, 0)
			if err != nil {
				return true, out, err
			}
			if len(smp) > 0 {
				rs.Latest = &smp[len(smp)-1]
			}
		}
		var err error
		if rs.CUDAOOMs, err = db.CountEvents(r.ID, "cuda_oom"); err != nil {
			return true, out, err
		}
		out = append(out, rs)
	}
	return true, out, nil
}

func liveRuns(rs []metrics.RunState) []LiveRun {
	out := make([]LiveRun, 0, len(rs))
	for _, r := range rs {
		l := LiveRun{ID: r.Run.ID, Job: r.Job, Command: r.Run.Command, Start: r.Run.Start, LastSample: r.Run.LastSample, CUDAOOMs: r.CUDAOOMs}
		if v, ok := r.Run.Peaks.Get(store.PeakAllocPeakAllocated); ok {
			l.PeakAllocatedBytes = &v
		}
		if v, ok := r.Run.Peaks.Get(store.PeakAllocPeakReserved); ok {
			l.PeakReservedBytes = &v
		}
		if s := r.Latest; s != nil {
			l.AllocatedBytes, l.ReservedBytes, l.Step, l.CgroupUsageBytes = s.AllocAllocated, s.AllocReserved, s.Step, s.CgroupUsage
			if v, ok := s.Extra[store.ExtraAllocRetries]; ok {
				l.AllocRetries = &v
			}
		}
		out = append(out, l)
	}
	return out
}
