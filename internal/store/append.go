package store

import (
	"database/sql"
	"fmt"
	"time"
)

// batch is what waits in memory for the next flush.
type batch struct {
	samples []rowSample
	events  []rowEvent
	steps   []rowStep
}

type rowSample struct {
	run int64
	s   Sample
}
type rowEvent struct {
	run int64
	e   Event
}
type rowStep struct {
	run int64
	s   Step
}

// maxPending bounds memory when the disk is stuck: beyond it the oldest
// samples are dropped (events and steps are kept).
const maxPending = 100000

// AppendSample buffers one sample of run id; it is written by the next flush.
func (db *DB) AppendSample(id string, s Sample) error {
	rowid, err := db.rowID(id)
	if err != nil {
		return err
	}
	db.mu.Lock()
	if len(db.pending.samples) >= maxPending {
		db.pending.samples = db.pending.samples[1:]
	}
	db.pending.samples = append(db.pending.samples, rowSample{rowid, s})
	db.active[rowid] = true
	db.mu.Unlock()
	return nil
}

// AppendEvent buffers an event and wakes the flusher, so events reach the
// disk within milliseconds rather than at the next tick.
func (db *DB) AppendEvent(id string, e Event) error {
	rowid, err := db.rowID(id)
	if err != nil {
		return err
	}
	db.mu.Lock()
	db.pending.events = append(db.pending.events, rowEvent{rowid, e})
	db.mu.Unlock()
	select {
	case db.wake <- struct{}{}:
	default:
	}
	return nil
}

// AppendStep buffers one optimizer step row.
func (db *DB) AppendStep(id string, s Step) error {
	rowid, err := db.rowID(id)
	if err != nil {
		return err
	}
	db.mu.Lock()
	db.pending.steps = append(db.pending.steps, rowStep{rowid, s})
	db.active[rowid] = true
	db.mu.Unlock()
	return nil
}

// Flush writes everything buffered in one transaction; when it returns,
// every append made before the call is on disk (or the error says why).
func (db *DB) Flush() error {
	db.flushMu.Lock()
	defer db.flushMu.Unlock()
	db.mu.Lock()
	b := db.pending
	db.pending = batch{}
	db.mu.Unlock()
	if len(b.samples)+len(b.events)+len(b.steps) == 0 {
		return nil
	}
	if err := db.write(b); err != nil {
		// Put the batch back so a transient error (disk full, busy) loses nothing.
		db.mu.Lock()
		db.pending.samples = append(b.samples, db.pending.samples...)
		db.pending.events = append(b.events, db.pending.events...)
		db.pending.steps = append(b.steps, db.pending.steps...)
		if n := len(db.pending.samples); n > maxPending {
			db.pending.samples = db.pending.samples[n-maxPending:]
		}
		db.mu.Unlock()
		return fmt.Errorf("flush to %s: %w", db.path, err)
	}
	return nil
}

func (db *DB) write(b batch) error {
	tx, err := db.sql.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := insertSamples(tx, b.samples); err != nil {
		return err
	}
	if len(b.events) > 0 {
		st, err := tx.Prepare(`INSERT INTO events (run, t_ms, kind, source, pid, message, data) VALUES (?,?,?,?,?,?,?)`)
		if err != nil {
			return err
		}
		for _, r := range b.events {
			e := r.e
			if _, err := st.Exec(r.run, ms(e.Time), e.Kind, e.Source, e.PID, e.Message, rawOrNil(e.Data)); err != nil {
				return err
			}
		}
	}
	if err := insertSteps(tx, b.steps); err != nil {
		return err
	}
	return tx.Commit()
}

func insertSamples(tx *sql.Tx, rows []rowSample) error {
	if len(rows) == 0 {
		return nil
	}
	st, err := tx.Prepare(`INSERT INTO samples (run, t_ms, res_ms, cgroup_usage, host_available, pss_total, rss_total, swap_total, alloc_allocated, alloc_reserved, step, gpu, extra) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, r := range rows {
		s := r.s
		if _, err := st.Exec(r.run, ms(s.Time), s.Resolution, orNil(s.CgroupUsage), orNil(s.HostAvailable),
			orNil(s.PSSTotal), orNil(s.RSSTotal), orNil(s.SwapTotal), orNil(s.AllocAllocated),
			orNil(s.AllocReserved), orNil(s.Step), gpuCol(s), jsonOrNil(s.Extra)); err != nil {
			return err
		}
	}
	return nil
}

func insertSteps(tx *sql.Tx, rows []rowStep) error {
	if len(rows) == 0 {
		return nil
	}
	st, err := tx.Prepare(`INSERT INTO steps (run, t_ms, step, pid, rank, steps, step_seconds, allocated, reserved, peak_allocated, peak_reserved,
		step_peak_allocated, step_peak_reserved) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, r := range rows {
		s := r.s
		n := s.Steps
		if n <= 0 {
			n = 1
		}
		if _, err := st.Exec(r.run, ms(s.Time), s.Step, s.PID, orNil(s.Rank), n, orNil(s.StepSeconds),
			orNil(s.Allocated), orNil(s.Reserved), orNil(s.PeakAllocated), orNil(s.PeakReserved),
			orNil(s.StepPeakAllocated), orNil(s.StepPeakReserved)); err != nil {
			return err
		}
	}
	return nil
}

// gpuCol packs the per-device series (see gpucol.go); nil when none.
func gpuCol(s Sample) any {
	if b := encodeGPU(s.GPUUsed, s.GPUJobUsed); b != nil {
		return b
	}
	return nil
}

// flusher writes at least every FlushInterval, sooner when an event wakes
// it, and compacts old samples about once a minute.
func (db *DB) flusher() {
	defer close(db.done)
	t := time.NewTicker(db.opts.FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-db.stop:
			return
		case <-t.C:
		case <-db.wake:
		}
		db.keepErr(db.Flush())
		if now := db.opts.Now(); now.Sub(db.lastCompact) >= time.Minute {
			db.lastCompact = now
			db.keepErr(db.compactActive(false))
		}
	}
}

func (db *DB) keepErr(err error) {
	if err == nil {
		return
	}
	db.mu.Lock()
	if db.flushErr == nil {
		db.flushErr = err
	}
	db.mu.Unlock()
}

func (db *DB) takeErr() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	err := db.flushErr
	db.flushErr = nil
	return err
}

// Err returns (and clears) the first error of the background flusher, so
// the supervisor can report a failing disk once without stopping the job.
func (db *DB) Err() error { return db.takeErr() }

// orNil is an optional field as a column value: NULL for nil.
func orNil[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
