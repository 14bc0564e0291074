package store

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations[i] brings the schema from version i to i+1 (PRAGMA
// user_version). Never edit a released entry: append a new one.
var migrations = []string{
	// 1: the first schema.
	`CREATE TABLE runs (
		rowid INTEGER PRIMARY KEY,
		id TEXT NOT NULL UNIQUE,
		command TEXT NOT NULL,      -- JSON array
		cwd TEXT NOT NULL DEFAULT '',
		host TEXT NOT NULL DEFAULT '',
		user TEXT NOT NULL DEFAULT '',
		start_ms INTEGER NOT NULL,
		end_ms INTEGER,
		status TEXT NOT NULL,
		exit_code INTEGER,
		signal INTEGER,
		labels TEXT,                -- JSON object
		limits TEXT,                -- JSON
		peaks TEXT,                 -- JSON object
		summary TEXT,               -- JSON
		sup_pid INTEGER NOT NULL DEFAULT 0,
		sup_start INTEGER NOT NULL DEFAULT 0,
		boot_id TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX runs_start ON runs(start_ms);
	CREATE INDEX runs_status ON runs(status);
	CREATE TABLE samples (
		run INTEGER NOT NULL REFERENCES runs(rowid) ON DELETE CASCADE,
		t_ms INTEGER NOT NULL,
		res_ms INTEGER NOT NULL DEFAULT 0,
		cgroup_usage INTEGER, host_available INTEGER, pss_total INTEGER, rss_total INTEGER,
		swap_total INTEGER, alloc_allocated INTEGER, alloc_reserved INTEGER, step INTEGER,
		gpu BLOB,                   -- per-device GPU series, see gpucol.go
		extra TEXT                  -- JSON object of other series
	);
	CREATE INDEX samples_run_t ON samples(run, t_ms);
	CREATE TABLE events (
		run INTEGER NOT NULL REFERENCES runs(rowid) ON DELETE CASCADE,
		t_ms INTEGER NOT NULL,
		kind TEXT NOT NULL,
		source TEXT NOT NULL,
		pid INTEGER NOT NULL DEFAULT 0,
		message TEXT NOT NULL,
		data TEXT
	);
	CREATE INDEX events_run_t ON events(run, t_ms);
	CREATE TABLE steps (
		run INTEGER NOT NULL REFERENCES runs(rowid) ON DELETE CASCADE,
		t_ms INTEGER NOT NULL,
		step INTEGER NOT NULL,
		pid INTEGER NOT NULL,
		rank INTEGER,
		steps INTEGER NOT NULL DEFAULT 1,
		step_seconds REAL,
		allocated INTEGER, reserved INTEGER, peak_allocated INTEGER, peak_reserved INTEGER
	);
	CREATE INDEX steps_run_t ON steps(run, t_ms);`,
	// 2: measured per-step peaks (the hook resets the allocator's peaks at
	// each optimizer step and reads them at the next).
	`ALTER TABLE steps ADD COLUMN step_peak_allocated INTEGER;
	ALTER TABLE steps ADD COLUMN step_peak_reserved INTEGER;`,
}

func schemaVersion(ctx context.Context, db *sql.DB) (int, error) {
	var v int
	err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	return v, err
}

// migrate applies the missing migrations, each in its own transaction with
// the version bump, so a crash mid-way leaves a consistent older version.
func migrate(ctx context.Context, db *sql.DB) error {
	for {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		var v int
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
			tx.Rollback()
			return err
		}
		if v > len(migrations) {
			tx.Rollback()
			return fmt.Errorf("schema version %d is newer than this torchmem (%d)", v, len(migrations))
		}
		if v == len(migrations) {
			return tx.Rollback()
		}
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", v+1, err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v+1)); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", v+1, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migration %d: %w", v+1, err)
		}
	}
}
