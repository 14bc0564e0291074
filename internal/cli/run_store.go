package cli

import (
	"fmt"
	"io"
	"maps"
	"sync"
	"time"

	"github.com/torchmem/torchmem/internal/store"
)

// runRecorder adapts the store to supervisor.Recorder: appends are
// buffered by the store; peaks are written at most once a second (each is
// a transaction); the first error is shown once and history continues
// best-effort, because monitoring never harms the job.
type runRecorder struct {
	db        *store.DB
	id        string
	warn      io.Writer
	once      sync.Once
	lastPeaks time.Time
}

func (r *runRecorder) fail(err error) {
	if err != nil {
		r.once.Do(func() { fmt.Fprintf(r.warn, "torchmem: history store: %v (the job is not affected)\n", err) })
	}
}

func (r *runRecorder) AppendSample(s store.Sample) { r.fail(r.db.AppendSample(r.id, s)) }
func (r *runRecorder) AppendEvent(e store.Event)   { r.fail(r.db.AppendEvent(r.id, e)) }
func (r *runRecorder) AppendStep(s store.Step)     { r.fail(r.db.AppendStep(r.id, s)) }

func (r *runRecorder) UpdatePeaks(p map[string]int64) {
	if time.Since(r.lastPeaks) < time.Second {
		return
	}
	r.lastPeaks = time.Now()
	r.fail(r.db.UpdatePeaks(r.id, maps.Clone(p)))
}

// runOpenHistory opens the store (path "" = default) or returns nil and says why.
func runOpenHistory(path string, warn io.Writer) *store.DB {
	if path == "" {
		path = store.DefaultPath()
	}
	db, err := store.Open(path, store.Options{})
	if err != nil {
		fmt.Fprintf(warn, "torchmem: history off: %v\n", err)
		return nil
	}
	return db
}
