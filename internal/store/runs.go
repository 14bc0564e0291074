package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"strings"
	"time"
)

// ErrNotFound is returned by Run for an unknown id.
var ErrNotFound = errors.New("no such run")

// ErrAmbiguous is returned by Run for a prefix matching several runs.
var ErrAmbiguous = errors.New("run id prefix matches several runs")

// CreateRun inserts r as running. Empty fields are filled in: ID (a new
// short id), Start (now), Host, User, and the supervisor identity (this
// process), which is how a dead supervisor is later recognised.
func (db *DB) CreateRun(r *Run) error {
	if r.Start.IsZero() {
		r.Start = db.opts.Now()
	}
	if r.Host == "" {
		r.Host = db.host
	}
	if r.User == "" {
		if u, err := user.Current(); err == nil {
			r.User = u.Username
		}
	}
	if r.SupervisorPID == 0 {
		r.SupervisorPID = os.Getpid()
		r.SupervisorStart, _ = procStartTime(db.opts.Procs, r.SupervisorPID)
		r.BootID = db.boot
	}
	r.Status = StatusRunning
	cmd, _ := json.Marshal(r.Command)
	explicit := r.ID != ""
	for try := 0; try < 8; try++ {
		if !explicit {
			r.ID = newRunID()
		}
		res, err := db.sql.Exec(`INSERT INTO runs (id, command, cwd, host, user, start_ms, status, labels, limits, peaks, summary, sup_pid, sup_start, boot_id)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			r.ID, string(cmd), r.Cwd, r.Host, r.User, ms(r.Start), string(r.Status), jsonOrNil(r.Labels), rawOrNil(r.Limits),
			jsonOrNil(r.Peaks), rawOrNil(r.Summary), r.SupervisorPID, int64(r.SupervisorStart), r.BootID)
		if err != nil {
			if !explicit && strings.Contains(err.Error(), "UNIQUE") {
				continue
			}
			return fmt.Errorf("create run in %s: %w", db.path, err)
		}
		rowid, _ := res.LastInsertId()
		db.mu.Lock()
		db.runIDs[r.ID] = rowid
		db.mu.Unlock()
		return nil
	}
	return fmt.Errorf("create run in %s: could not find a free id", db.path)
}

// UpdatePeaks merges peaks into the run's stored peaks (max per key).
func (db *DB) UpdatePeaks(id string, peaks map[string]int64) error {
	return db.updateRun(id, func(tx *sql.Tx, rowid int64) error {
		return mergePeaks(tx, rowid, peaks)
	})
}

// SetSummary replaces the run's summary JSON (the post-mortem).
func (db *DB) SetSummary(id string, summary json.RawMessage) error {
	return db.updateRun(id, func(tx *sql.Tx, rowid int64) error {
		_, err := tx.Exec(`UPDATE runs SET summary=? WHERE rowid=?`, rawOrNil(summary), rowid)
		return err
	})
}

// SetLabels merges labels into the run's labels.
func (db *DB) SetLabels(id string, labels map[string]string) error {
	return db.updateRun(id, func(tx *sql.Tx, rowid int64) error {
		var cur sql.NullString
		if err := tx.QueryRow(`SELECT labels FROM runs WHERE rowid=?`, rowid).Scan(&cur); err != nil {
			return err
		}
		m := map[string]string{}
		if cur.Valid {
			_ = json.Unmarshal([]byte(cur.String), &m)
		}
		for k, v := range labels {
			m[k] = v
		}
		_, err := tx.Exec(`UPDATE runs SET labels=? WHERE rowid=?`, jsonOrNil(m), rowid)
		return err
	})
}

// FinishRun flushes pending appends and records the end of the run.
func (db *DB) FinishRun(id string, f Finish) error {
	if err := db.Flush(); err != nil {
		return err
	}
	if f.End.IsZero() {
		f.End = db.opts.Now()
	}
	if f.Status == "" || f.Status == StatusRunning {
		return fmt.Errorf("finish run %s: status %q is not an outcome", id, f.Status)
	}
	return db.updateRun(id, func(tx *sql.Tx, rowid int64) error {
		if err := mergePeaks(tx, rowid, f.Peaks); err != nil {
			return err
		}
		q := `UPDATE runs SET end_ms=?, status=?, exit_code=?, signal=? WHERE rowid=?`
		if _, err := tx.Exec(q, ms(f.End), string(f.Status), orNil(f.ExitCode), orNil(f.Signal), rowid); err != nil {
			return err
		}
		if f.Summary != nil {
			_, err := tx.Exec(`UPDATE runs SET summary=? WHERE rowid=?`, rawOrNil(f.Summary), rowid)
			return err
		}
		return nil
	})
}

// DeleteRun removes a run and all its rows.
func (db *DB) DeleteRun(id string) error {
	err := db.updateRun(id, func(tx *sql.Tx, rowid int64) error {
		for _, q := range []string{`DELETE FROM samples WHERE run=?`, `DELETE FROM events WHERE run=?`,
			`DELETE FROM steps WHERE run=?`, `DELETE FROM runs WHERE rowid=?`} {
			if _, err := tx.Exec(q, rowid); err != nil {
				return err
			}
		}
		db.mu.Lock()
		delete(db.active, rowid)
		delete(db.runIDs, id)
		db.mu.Unlock()
		return nil
	})
	return err
}

func (db *DB) updateRun(id string, fn func(tx *sql.Tx, rowid int64) error) error {
	rowid, err := db.rowID(id)
	if err != nil {
		return err
	}
	tx, err := db.sql.Begin()
	if err != nil {
		return fmt.Errorf("update run %s in %s: %w", id, db.path, err)
	}
	if err := fn(tx, rowid); err != nil {
		tx.Rollback()
		return fmt.Errorf("update run %s in %s: %w", id, db.path, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("update run %s in %s: %w", id, db.path, err)
	}
	return nil
}

func mergePeaks(tx *sql.Tx, rowid int64, peaks map[string]int64) error {
	if len(peaks) == 0 {
		return nil
	}
	var cur sql.NullString
	if err := tx.QueryRow(`SELECT peaks FROM runs WHERE rowid=?`, rowid).Scan(&cur); err != nil {
		return err
	}
	m := map[string]int64{}
	if cur.Valid {
		_ = json.Unmarshal([]byte(cur.String), &m)
	}
	for k, v := range peaks {
		if old, ok := m[k]; !ok || v > old {
			m[k] = v
		}
	}
	_, err := tx.Exec(`UPDATE runs SET peaks=? WHERE rowid=?`, jsonOrNil(m), rowid)
	return err
}

// rowID maps a public id to the internal rowid (exact id only).
func (db *DB) rowID(id string) (int64, error) {
	db.mu.Lock()
	rowid, ok := db.runIDs[id]
	db.mu.Unlock()
	if ok {
		return rowid, nil
	}
	err := db.sql.QueryRow(`SELECT rowid FROM runs WHERE id=?`, id).Scan(&rowid)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("run %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("look up run %q in %s: %w", id, db.path, err)
	}
	db.mu.Lock()
	db.runIDs[id] = rowid
	db.mu.Unlock()
	return rowid, nil
}

// markLost turns running runs whose supervisor is gone into
// StatusSupervisorLost, ending them at their last sample. It returns the
// ids changed. Read-only handles change nothing (readRun reports them lost).
func (db *DB) markLost(ctx context.Context) ([]string, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT rowid, id, sup_pid, sup_start, boot_id, host, start_ms FROM runs WHERE status=?`, string(StatusRunning))
	if err != nil {
		return nil, err
	}
	type cand struct {
		rowid, start int64
		id           string
	}
	var lost []cand
	for rows.Next() {
		var c cand
		var pid int
		var sst int64
		var boot, host string
		if err := rows.Scan(&c.rowid, &c.id, &pid, &sst, &boot, &host, &c.start); err != nil {
			rows.Close()
			return nil, err
		}
		if !db.runAlive(host, pid, uint64(sst), boot) {
			lost = append(lost, c)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil || db.opts.ReadOnly {
		return nil, err
	}
	var ids []string
	for _, c := range lost {
		_, err := db.sql.ExecContext(ctx, `UPDATE runs SET status=?1, end_ms=COALESCE(
			(SELECT MAX(t) FROM (SELECT MAX(t_ms) AS t FROM samples WHERE run=?2
			 UNION ALL SELECT MAX(t_ms) FROM events WHERE run=?2
			 UNION ALL SELECT MAX(t_ms) FROM steps WHERE run=?2)), start_ms)
			WHERE rowid=?2 AND status=?3`, string(StatusSupervisorLost), c.rowid, string(StatusRunning))
		if err != nil {
			return ids, err
		}
		ids = append(ids, c.id)
	}
	return ids, nil
}

// runAlive judges only runs of this host: a database in a home directory
// shared by several machines holds runs whose supervisors this /proc
// cannot see.
func (db *DB) runAlive(host string, pid int, start uint64, boot string) bool {
	if host != "" && db.host != "" && host != db.host {
		return true
	}
	return supervisorAlive(db.opts.Procs, db.boot, pid, start, boot)
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

func jsonOrNil[T any](m map[string]T) any {
	if len(m) == 0 {
		return nil
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func rawOrNil(r json.RawMessage) any {
	if len(r) == 0 {
		return nil
	}
	return string(r)
}

// Prune deletes finished runs (not running) that started before before,
// with all their rows, and returns how many it deleted. Freed pages are
// reused by later runs; the file does not shrink without VACUUM.
func (db *DB) Prune(before time.Time) (int, error) {
	rows, err := db.sql.Query(`SELECT id FROM runs WHERE start_ms<? AND status<>?`, ms(before), string(StatusRunning))
	if err != nil {
		return 0, fmt.Errorf("prune %s: %w", db.path, err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, fmt.Errorf("prune %s: %w", db.path, err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	for i, id := range ids {
		if err := db.DeleteRun(id); err != nil {
			return i, err
		}
	}
	return len(ids), nil
}
