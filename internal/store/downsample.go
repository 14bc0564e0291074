package store

import (
	"database/sql"
	"fmt"
)

// Compact downsamples the runs this handle has appended to, by
// Options.Tiers and the Options.Now clock. The background flusher does this
// about once a minute; call it to force a pass (tests, benchmarks).
func (db *DB) Compact() error {
	if err := db.Flush(); err != nil {
		return err
	}
	return db.compactActive(false)
}

// compactActive downsamples the runs this handle appended to. final also
// forgets them (Close).
func (db *DB) compactActive(final bool) error {
	db.mu.Lock()
	runs := make([]int64, 0, len(db.active))
	for r := range db.active {
		runs = append(runs, r)
	}
	if final {
		db.active = map[int64]bool{}
	}
	db.mu.Unlock()
	now := ms(db.opts.Now())
	for _, run := range runs {
		for _, t := range db.opts.Tiers {
			w := t.Width.Milliseconds()
			if w <= 0 {
				continue
			}
			cutoff := (now - t.After.Milliseconds()) / w * w
			if err := db.compactSamples(run, cutoff, w); err != nil {
				return fmt.Errorf("downsample samples in %s: %w", db.path, err)
			}
			if err := db.compactSteps(run, cutoff, w); err != nil {
				return fmt.Errorf("downsample steps in %s: %w", db.path, err)
			}
		}
	}
	return nil
}

// bucketsWhere selects rows before cutoff (?2) in w-ms buckets (?3) of run
// (?1) that still hold a row finer than w, so a second pass changes nothing.
const bucketsWhere = `run=?1 AND t_ms<?2 AND (t_ms/?3) IN
	(SELECT DISTINCT t_ms/?3 FROM %[1]s WHERE run=?1 AND t_ms<?2 AND %[2]s)`

// compactSamples merges rows older than cutoff into buckets of w ms: maxima
// of usage series, minimum of host_available (the worst moment either way).
func (db *DB) compactSamples(run, cutoff, w int64) error {
	where := fmt.Sprintf(bucketsWhere, "samples", "res_ms<?3") + " AND res_ms<=?3"
	return db.inTx(func(tx *sql.Tx) error {
		rows, err := tx.Query(`SELECT `+sampleCols+` FROM samples WHERE `+where+` ORDER BY t_ms`, run, cutoff, w)
		if err != nil {
			return err
		}
		var out []rowSample
		var cur *Sample
		for rows.Next() {
			s, err := scanSample(rows)
			if err != nil {
				rows.Close()
				return err
			}
			b := ms(s.Time) / w * w
			if cur != nil && ms(cur.Time) == b {
				mergeSample(cur, s)
				continue
			}
			if cur != nil {
				out = append(out, rowSample{run, *cur})
			}
			s.Time, s.Resolution = fromMS(b), w
			cur = &s
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if cur == nil {
			return nil
		}
		out = append(out, rowSample{run, *cur})
		if _, err := tx.Exec(`DELETE FROM samples WHERE `+where, run, cutoff, w); err != nil {
			return err
		}
		return insertSamples(tx, out)
	})
}

// compactSteps keeps one row per process and bucket: the last step number,
// the steps summed, the mean step time, the allocator maxima.
func (db *DB) compactSteps(run, cutoff, w int64) error {
	// Steps have no resolution column: a bucket needs work while it holds
	// more than one row of a process.
	where := `run=?1 AND t_ms<?2 AND (pid, t_ms/?3) IN
		(SELECT pid, t_ms/?3 FROM steps WHERE run=?1 AND t_ms<?2 GROUP BY pid, t_ms/?3 HAVING COUNT(*)>1)`
	return db.inTx(func(tx *sql.Tx) error {
		rows, err := tx.Query(`SELECT `+stepCols+` FROM steps WHERE `+where+` ORDER BY pid, t_ms`, run, cutoff, w)
		if err != nil {
			return err
		}
		var out []rowStep
		var cur *Step
		var curB int64
		for rows.Next() {
			s, err := scanStep(rows)
			if err != nil {
				rows.Close()
				return err
			}
			b := ms(s.Time) / w
			if cur != nil && cur.PID == s.PID && curB == b {
				mergeStep(cur, s)
				continue
			}
			if cur != nil {
				out = append(out, rowStep{run, *cur})
			}
			cur, curB = &s, b
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if cur == nil {
			return nil
		}
		out = append(out, rowStep{run, *cur})
		if _, err := tx.Exec(`DELETE FROM steps WHERE `+where, run, cutoff, w); err != nil {
			return err
		}
		return insertSteps(tx, out)
	})
}

func (db *DB) inTx(fn func(tx *sql.Tx) error) error {
	tx, err := db.sql.Begin()
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func mergeSample(dst *Sample, s Sample) {
	for _, p := range []struct {
		d **int64
		v *int64
	}{
		{&dst.CgroupUsage, s.CgroupUsage}, {&dst.PSSTotal, s.PSSTotal}, {&dst.RSSTotal, s.RSSTotal},
		{&dst.SwapTotal, s.SwapTotal}, {&dst.AllocAllocated, s.AllocAllocated},
		{&dst.AllocReserved, s.AllocReserved}, {&dst.Step, s.Step},
	} {
		*p.d = maxPtr(*p.d, p.v)
	}
	dst.HostAvailable = minPtr(dst.HostAvailable, s.HostAvailable)
	dst.GPUUsed = maxSlice(dst.GPUUsed, s.GPUUsed)
	dst.GPUJobUsed = maxSlice(dst.GPUJobUsed, s.GPUJobUsed)
	for k, v := range s.Extra {
		if dst.Extra == nil {
			dst.Extra = map[string]float64{}
		}
		if old, ok := dst.Extra[k]; !ok || v > old {
			dst.Extra[k] = v
		}
	}
}

func mergeStep(dst *Step, s Step) {
	n0, n1 := dst.Steps, s.Steps
	if n0 <= 0 {
		n0 = 1
	}
	if n1 <= 0 {
		n1 = 1
	}
	switch {
	case dst.StepSeconds != nil && s.StepSeconds != nil:
		v := (*dst.StepSeconds*float64(n0) + *s.StepSeconds*float64(n1)) / float64(n0+n1)
		dst.StepSeconds = &v
	case dst.StepSeconds == nil:
		dst.StepSeconds = s.StepSeconds
	}
	dst.Steps = n0 + n1
	if s.Step > dst.Step {
		dst.Step = s.Step
	}
	dst.Time = s.Time
	dst.Allocated = maxPtr(dst.Allocated, s.Allocated)
	dst.Reserved = maxPtr(dst.Reserved, s.Reserved)
	dst.PeakAllocated = maxPtr(dst.PeakAllocated, s.PeakAllocated)
	dst.PeakReserved = maxPtr(dst.PeakReserved, s.PeakReserved)
	dst.StepPeakAllocated = maxPtr(dst.StepPeakAllocated, s.StepPeakAllocated)
	dst.StepPeakReserved = maxPtr(dst.StepPeakReserved, s.StepPeakReserved)
}

func maxPtr(a, b *int64) *int64 {
	if a == nil || (b != nil && *b > *a) {
		return b
	}
	return a
}

func minPtr(a, b *int64) *int64 {
	if a == nil || (b != nil && *b < *a) {
		return b
	}
	return a
}

func maxSlice(a, b []*int64) []*int64 {
	if len(b) > len(a) {
		a = append(a, make([]*int64, len(b)-len(a))...)
	}
	for i, v := range b {
		a[i] = maxPtr(a[i], v)
	}
	return a
}
