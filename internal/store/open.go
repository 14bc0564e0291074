package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver; pure Go
)

// Options configure Open. Zero values pick the defaults.
type Options struct {
	// FlushInterval bounds how long an append waits in memory (default 1 s).
	FlushInterval time.Duration
	// Tiers say how old samples are downsampled; nil means DefaultTiers.
	// An empty non-nil slice keeps every sample.
	Tiers []Tier
	// Procs reads this host's processes, by which a running run's
	// supervisor is judged alive or lost; nil: procfs at procfs.DefaultRoot.
	Procs Procs
	// Now is the clock used for downsampling ages (default time.Now).
	Now func() time.Time
	// ReadOnly opens without writing anything, not even the lost-supervisor
	// check's updates (it still reports them in Run/Runs).
	ReadOnly bool
}

// Tier: samples older than After are merged into buckets of Width (max of
// each series per bucket).
type Tier struct {
	After time.Duration
	Width time.Duration
}

// DefaultTiers keep 10 minutes at full rate, then 1 s buckets, and 10 s
// buckets after 6 hours: a 10 Hz run stays small (see docs/store.md).
var DefaultTiers = []Tier{
	{After: 10 * time.Minute, Width: time.Second},
	{After: 6 * time.Hour, Width: 10 * time.Second},
}

// DB is an open history database. It is safe for concurrent use.
type DB struct {
	sql  *sql.DB
	path string
	opts Options
	host string // os.Hostname(), to judge only this machine's running runs
	boot string // this boot's id, read once: it cannot change while we run

	flushMu     sync.Mutex // serialises flushes: Flush returning means "written"
	mu          sync.Mutex
	pending     batch
	runIDs      map[string]int64 // public id -> rowid, for runs this handle writes
	active      map[int64]bool   // rowids appended to since the last compaction
	flushErr    error
	wake        chan struct{}
	stop        chan struct{}
	done        chan struct{}
	lastCompact time.Time
}

// DefaultPath is $XDG_STATE_HOME/torchmem/torchmem.db, else
// ~/.local/state/torchmem/torchmem.db; for root, /var/lib/torchmem/torchmem.db.
func DefaultPath() string {
	if os.Geteuid() == 0 {
		return "/var/lib/torchmem/torchmem.db"
	}
	if x := os.Getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "torchmem", "torchmem.db")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return filepath.Join(os.TempDir(), "torchmem-"+fmt.Sprint(os.Getuid()), "torchmem.db")
	}
	return filepath.Join(home, ".local", "state", "torchmem", "torchmem.db")
}

// Open opens (creating if needed, with its directory, mode 0700) the
// database at path, brings its schema up to date, and marks runs whose
// supervisor died as StatusSupervisorLost.
func Open(path string, o Options) (*DB, error) {
	if o.FlushInterval <= 0 {
		o.FlushInterval = time.Second
	}
	if o.Tiers == nil {
		o.Tiers = DefaultTiers
	}
	if o.Procs == nil {
		o.Procs = hostProcs()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if !o.ReadOnly {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("create store directory %s: %w", filepath.Dir(path), err)
		}
	} else if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	sdb, err := sql.Open("sqlite", dsn(path, o.ReadOnly))
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	host, _ := os.Hostname()
	db := &DB{sql: sdb, path: path, opts: o, host: host, boot: bootID(o.Procs), runIDs: map[string]int64{}, active: map[int64]bool{},
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	if err := db.init(); err != nil {
		sdb.Close()
		return nil, err
	}
	if o.ReadOnly {
		close(db.done)
	} else {
		go db.flusher()
	}
	return db, nil
}

func dsn(path string, ro bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	if ro {
		q.Add("mode", "ro")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		// NORMAL in WAL mode loses nothing on a process crash (only on power loss).
		q.Add("_pragma", "synchronous(NORMAL)")
		q.Set("_txlock", "immediate")
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
}

func (db *DB) init() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if !db.opts.ReadOnly {
		if err := migrate(ctx, db.sql); err != nil {
			return fmt.Errorf("migrate store %s: %w", db.path, err)
		}
		_ = os.Chmod(db.path, 0o600)
		if _, err := db.markLost(ctx); err != nil {
			return fmt.Errorf("check running runs in %s: %w", db.path, err)
		}
		return nil
	}
	v, err := schemaVersion(ctx, db.sql)
	if err != nil {
		return fmt.Errorf("read store %s: %w", db.path, err)
	}
	if v > len(migrations) {
		return fmt.Errorf("store %s has schema version %d, newer than this torchmem (%d)", db.path, v, len(migrations))
	}
	return nil
}

// Path returns the database file.
func (db *DB) Path() string { return db.path }

// SQL exposes the underlying handle for read-only ad-hoc queries (tests,
// `torchmem serve` extensions). Writers must use the typed methods.
func (db *DB) SQL() *sql.DB { return db.sql }

// Close flushes pending appends, compacts the runs this handle wrote, and
// closes the database. It returns the first background flush error, if any.
func (db *DB) Close() error {
	select {
	case <-db.stop:
		return nil
	default:
	}
	close(db.stop)
	<-db.done
	var errs []error
	if !db.opts.ReadOnly {
		errs = append(errs, db.Flush(), db.compactActive(true))
	}
	errs = append(errs, db.takeErr(), db.sql.Close())
	return errors.Join(errs...)
}
