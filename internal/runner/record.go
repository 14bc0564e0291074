package runner

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/text/language"

	"github.com/torchmem/torchmem/internal/store"
	"github.com/torchmem/torchmem/internal/supervisor"
)

// record is the run's entry in the history store; db is nil when history
// is off (by request, or the store could not be opened or written).
type record struct {
	db  *store.DB
	run *store.Run
}

// newRecord creates the run's record and points sc.Rec at it. Without
// history the run's id is torchmem's pid.
func (c *Config) newRecord(sc *supervisor.Config) *record {
	labels := withIdentity(store.LabelsFromEnv(sc.Env), runIdentity(c.ProcRoot, sc.Env))
	r := &record{run: &store.Run{Command: c.Argv, Start: time.Now(), Labels: labels, Limits: c.limitsJSON()}}
	r.run.Cwd, _ = os.Getwd()
	if !c.NoHistory {
		r.db = openHistory(c.DB, c.Notices, c.Lang)
	}
	if r.db != nil {
		if err := r.db.CreateRun(r.run); err != nil {
			fmt.Fprintln(c.Notices, say(c.Lang, "history_off", err.Error()))
			r.db.Close()
			r.db = nil
		} else {
			sc.Rec = &recorder{db: r.db, id: r.run.ID, warn: c.Notices, lang: c.Lang}
		}
	}
	if r.run.ID == "" {
		r.run.ID = fmt.Sprintf("%d", os.Getpid())
	}
	return r
}

func (r *record) close() {
	if r.db != nil {
		r.db.Close()
	}
}

// notStarted ends the record of a job that could not be started: exit
// status 127, as a shell's, and the error.
func (r *record) notStarted(err error) {
	if r.db == nil {
		return
	}
	code := 127
	_ = r.db.FinishRun(r.run.ID, store.Finish{End: time.Now(), Status: store.StatusExited, ExitCode: &code, Summary: toJSON(map[string]string{"error": err.Error()})})
}

// finish ends the record with how the run ended.
func (r *record) finish(res *supervisor.Result) error {
	if r.db == nil {
		return nil
	}
	return r.db.FinishRun(r.run.ID, FinishOf(res))
}

// FinishOf is the store's record of how a supervised run ended, ending
// now: oom-killed for a kernel OOM kill (the job's cgroup or the host's),
// stopped when a policy rule of torchmem's ended it (by its signal, or
// the job caught it and exited: then its code), killed for another
// signal, else exited with the job's code. A stop is not a kill: listed
// as "killed", a run torchmem stopped on purpose read as a crash.
func FinishOf(res *supervisor.Result) store.Finish {
	s := res.Summary
	fin := store.Finish{End: time.Now(), Status: store.StatusExited, Peaks: s.Peaks, Summary: toJSON(s)}
	code := s.ExitCode
	switch {
	case s.Cause == supervisor.CauseCgroupOOMKill || s.Cause == supervisor.CauseHostOOMKill:
		fin.Status, fin.Signal = store.StatusOOMKilled, s.Signal
	case s.Cause == supervisor.CausePolicyStop:
		fin.Status, fin.Signal = store.StatusStopped, s.Signal
		if s.Signal == nil {
			fin.ExitCode = &code
		}
	case s.Signal != nil:
		fin.Status, fin.Signal = store.StatusKilled, s.Signal
	default:
		fin.ExitCode = &code
	}
	return fin
}

// limitsJSON is the record's settings, as given (show prints them back as
// flags).
func (c *Config) limitsJSON() json.RawMessage {
	m := map[string]any{}
	for k, v := range map[string]string{"memory_max": c.MemoryMax, "memory_high": c.MemoryHigh, "swap_max": c.SwapMax,
		"gpu_threshold": c.GPUThreshold, "host_threshold": c.HostThreshold, "policy": c.PolicyFile, "numa": c.NUMA} {
		if v != "" {
			m[k] = v
		}
	}
	if c.OOMScoreAdj != nil {
		m["oom_score_adj"] = *c.OOMScoreAdj
	}
	m["interval"] = c.Interval.String()
	return toJSON(m)
}

func toJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// snapshotDir is where the run's memory snapshots are kept (OOM dumps,
// the snapshot action): next to the history store, else in the working
// directory. Inside the private hook dir they were deleted with it.
func snapshotDir(db *store.DB, cwd, id string) string {
	if db != nil {
		return filepath.Join(filepath.Dir(db.Path()), "snapshots", id)
	}
	return filepath.Join(cwd, "torchmem-"+id+"-snapshots")
}

// openHistory opens the store (path "" = default) or returns nil and says why.
func openHistory(path string, warn io.Writer, lang language.Tag) *store.DB {
	if path == "" {
		path = store.DefaultPath()
	}
	db, err := store.Open(path, store.Options{})
	if err != nil {
		fmt.Fprintln(warn, say(lang, "history_off", err.Error()))
		return nil
	}
	return db
}

// recorder adapts the store to supervisor.Recorder: appends are buffered
// by the store; peaks are written at most once a second (each is a
// transaction); the first error is shown once and history continues
// best-effort, because monitoring never harms the job.
type recorder struct {
	db        *store.DB
	id        string
	warn      io.Writer
	lang      language.Tag
	once      sync.Once
	lastPeaks time.Time
}

var _ supervisor.Recorder = (*recorder)(nil)

func (r *recorder) fail(err error) {
	if err != nil {
		r.once.Do(func() { fmt.Fprintln(r.warn, say(r.lang, "history_error", err.Error())) })
	}
}

func (r *recorder) AppendSample(s store.Sample) { r.fail(r.db.AppendSample(r.id, s)) }
func (r *recorder) AppendEvent(e store.Event)   { r.fail(r.db.AppendEvent(r.id, e)) }
func (r *recorder) AppendStep(s store.Step)     { r.fail(r.db.AppendStep(r.id, s)) }

func (r *recorder) UpdatePeaks(p map[string]int64) {
	if time.Since(r.lastPeaks) < time.Second {
		return
	}
	r.lastPeaks = time.Now()
	r.fail(r.db.UpdatePeaks(r.id, maps.Clone(p)))
}
