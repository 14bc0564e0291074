package store

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

const runCols = `rowid, id, command, cwd, host, user, start_ms, end_ms, status, exit_code, signal, labels, limits, peaks, summary, sup_pid, sup_start, boot_id,
	(SELECT COUNT(*) FROM samples WHERE run=runs.rowid), (SELECT MAX(t_ms) FROM samples WHERE run=runs.rowid)`

// Run returns one run by exact id, unique id prefix, or "last" (the newest).
func (db *DB) Run(ref string) (*Run, error) {
	var rows *sql.Rows
	var err error
	switch {
	case ref == "last" || ref == "latest":
		rows, err = db.sql.Query(`SELECT ` + runCols + ` FROM runs ORDER BY start_ms DESC, rowid DESC LIMIT 1`)
	case ref == "":
		return nil, fmt.Errorf("empty run id: %w", ErrNotFound)
	default:
		esc := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(ref)
		rows, err = db.sql.Query(`SELECT `+runCols+` FROM runs WHERE id=?1 OR id LIKE ?2 ESCAPE '\' ORDER BY id=?1 DESC LIMIT 3`, ref, esc+"%")
	}
	if err != nil {
		return nil, fmt.Errorf("read runs from %s: %w", db.path, err)
	}
	list, err := db.scanRuns(rows)
	if err != nil {
		return nil, err
	}
	switch {
	case len(list) == 0:
		return nil, fmt.Errorf("run %q: %w", ref, ErrNotFound)
	case list[0].ID == ref || len(list) == 1:
		return &list[0], nil
	default:
		return nil, fmt.Errorf("run %q (%s, %s, ...): %w", ref, list[0].ID, list[1].ID, ErrAmbiguous)
	}
}

// Runs returns runs matching f, newest first.
func (db *DB) Runs(f RunFilter) ([]Run, error) {
	var where []string
	var args []any
	if f.Status != "" {
		where, args = append(where, "status=?"), append(args, string(f.Status))
	}
	if !f.Since.IsZero() {
		where, args = append(where, "start_ms>=?"), append(args, ms(f.Since))
	}
	if !f.Until.IsZero() {
		where, args = append(where, "start_ms<?"), append(args, ms(f.Until))
	}
	if f.Command != "" {
		where, args = append(where, "instr(command, ?)>0"), append(args, strings.Trim(mustJSON(f.Command), `"`))
	}
	for k, v := range f.Label {
		where, args = append(where, "json_extract(labels, ?)=?"), append(args, "$."+jsonPathKey(k), v)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	q := `SELECT ` + runCols + ` FROM runs`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += fmt.Sprintf(` ORDER BY start_ms DESC, rowid DESC LIMIT %d`, limit)
	rows, err := db.sql.Query(q, args...)
	if err != nil {
		return nil, fmt.Errorf("read runs from %s: %w", db.path, err)
	}
	return db.scanRuns(rows)
}

func jsonPathKey(k string) string { return `"` + strings.ReplaceAll(k, `"`, ``) + `"` }

func mustJSON(s string) string { b, _ := json.Marshal(s); return string(b) }

func (db *DB) scanRuns(rows *sql.Rows) ([]Run, error) {
	defer rows.Close()
	var out []Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("read runs from %s: %w", db.path, err)
		}
		// A read-only handle (or one opened before the supervisor died)
		// still tells the truth about a dead supervisor.
		if r.Status == StatusRunning && !db.runAlive(r.Host, r.SupervisorPID, r.SupervisorStart, r.BootID) {
			r.Status = StatusSupervisorLost
			if r.End == nil {
				r.End = r.LastSample
			}
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

const sampleCols = `t_ms, res_ms, cgroup_usage, host_available, pss_total, rss_total, swap_total, alloc_allocated, alloc_reserved, step, gpu, extra`

// Samples returns the samples of run id with from <= t <= to (zero times:
// unbounded), oldest first. With maxPoints > 0 and more rows than that,
// rows are merged into equal time buckets (at most maxPoints): each series
// keeps its maximum in the bucket (host_available its minimum), so the
// peaks that matter for memory survive any zoom level; Resolution says the
// bucket width.
func (db *DB) Samples(id string, from, to time.Time, maxPoints int) ([]Sample, error) {
	sp, err := db.sampleSpan(id, from, to)
	if err != nil {
		return nil, err
	}
	if w := sp.width(maxPoints); w > 0 {
		out, err := db.samplesBucketed(sp, w)
		if err != nil {
			return nil, fmt.Errorf("read samples of %s from %s: %w", id, db.path, err)
		}
		return out, nil
	}
	rows, err := db.sql.Query(`SELECT `+sampleCols+` FROM samples WHERE run=? AND t_ms BETWEEN ? AND ? ORDER BY t_ms`, sp.run, sp.lo, sp.hi)
	if err != nil {
		return nil, fmt.Errorf("read samples of %s from %s: %w", id, db.path, err)
	}
	defer rows.Close()
	out := make([]Sample, 0, min(sp.n, 1<<16))
	for rows.Next() {
		s, err := scanSample(rows)
		if err != nil {
			return nil, fmt.Errorf("read samples of %s from %s: %w", id, db.path, err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// sampleSpan is what Samples reads of a run: its rowid, the range
// lo <= t_ms <= hi, the n rows in it and the times of the first (t0) and
// last (t1).
type sampleSpan struct{ run, lo, hi, n, t0, t1 int64 }

func (db *DB) sampleSpan(id string, from, to time.Time) (sampleSpan, error) {
	rowid, err := db.rowID(id)
	if err != nil {
		return sampleSpan{}, err
	}
	sp := sampleSpan{run: rowid, lo: -1 << 62, hi: 1 << 62}
	if !from.IsZero() {
		sp.lo = ms(from)
	}
	if !to.IsZero() {
		sp.hi = ms(to)
	}
	var t0, t1 sql.NullInt64
	err = db.sql.QueryRow(`SELECT COUNT(*), MIN(t_ms), MAX(t_ms) FROM samples WHERE run=? AND t_ms BETWEEN ? AND ?`, rowid, sp.lo, sp.hi).Scan(&sp.n, &t0, &t1)
	if err != nil {
		return sp, fmt.Errorf("read samples of %s from %s: %w", id, db.path, err)
	}
	sp.t0, sp.t1 = t0.Int64, t1.Int64
	return sp, nil
}

// width is the bucket width in ms that merges the span into at most
// maxPoints buckets from t0; 0 when it fits as it is.
func (sp sampleSpan) width(maxPoints int) int64 {
	if maxPoints <= 0 || sp.n <= int64(maxPoints) {
		return 0
	}
	return (sp.t1 - sp.t0 + int64(maxPoints)) / int64(maxPoints)
}

// Events returns the events of run id, oldest first.
func (db *DB) Events(id string) ([]Event, error) {
	rowid, err := db.rowID(id)
	if err != nil {
		return nil, err
	}
	rows, err := db.sql.Query(`SELECT t_ms, kind, source, pid, message, data FROM events WHERE run=? ORDER BY t_ms, rowid`, rowid)
	if err != nil {
		return nil, fmt.Errorf("read events of %s from %s: %w", id, db.path, err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var e Event
		var t int64
		var data sql.NullString
		if err := rows.Scan(&t, &e.Kind, &e.Source, &e.PID, &e.Message, &data); err != nil {
			return nil, fmt.Errorf("read events of %s from %s: %w", id, db.path, err)
		}
		e.Time = fromMS(t)
		if data.Valid {
			e.Data = json.RawMessage(data.String)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// CountEvents returns how many events of kind run id has, without reading
// them (torchmem serve counts each running run's CUDA OOMs every second).
func (db *DB) CountEvents(id, kind string) (int, error) {
	rowid, err := db.rowID(id)
	if err != nil {
		return 0, err
	}
	var n int
	if err := db.sql.QueryRow(`SELECT COUNT(*) FROM events WHERE run=? AND kind=?`, rowid, kind).Scan(&n); err != nil {
		return 0, fmt.Errorf("count events of %s in %s: %w", id, db.path, err)
	}
	return n, nil
}

const stepCols = `t_ms, step, pid, rank, steps, step_seconds, allocated, reserved, peak_allocated, peak_reserved,
	step_peak_allocated, step_peak_reserved`

// Steps returns the step rows of run id, oldest first; limit > 0 keeps
// the newest limit rows.
func (db *DB) Steps(id string, limit int) ([]Step, error) {
	rowid, err := db.rowID(id)
	if err != nil {
		return nil, err
	}
	q := `SELECT ` + stepCols + ` FROM steps WHERE run=? ORDER BY t_ms, rowid`
	if limit > 0 {
		q = fmt.Sprintf(`SELECT `+stepCols+` FROM (SELECT *, rowid AS r FROM steps WHERE run=? ORDER BY t_ms DESC, rowid DESC LIMIT %d) ORDER BY t_ms, r`, limit)
	}
	rows, err := db.sql.Query(q, rowid)
	if err != nil {
		return nil, fmt.Errorf("read steps of %s from %s: %w", id, db.path, err)
	}
	defer rows.Close()
	var out []Step
	for rows.Next() {
		s, err := scanStep(rows)
		if err != nil {
			return nil, fmt.Errorf("read steps of %s from %s: %w", id, db.path, err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
