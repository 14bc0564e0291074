package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/torchmem/torchmem/internal/report"
	"github.com/torchmem/torchmem/internal/store"
)

// Bounds of ?max_points on /api/v1/runs/{id}/samples.
const (
	DefaultMaxPoints = 2000
	MaxMaxPoints     = 20000
)

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	_ = enc.Encode(v)
}

// apiError writes {"error": "..."}: 404 for an unknown run, 400 for a bad
// parameter, 503 without a history store, 500 otherwise.
func apiError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	var bad badRequest
	switch {
	case errors.Is(err, store.ErrNotFound):
		code = http.StatusNotFound
	case errors.Is(err, store.ErrAmbiguous), errors.As(err, &bad):
		code = http.StatusBadRequest
	case errors.Is(err, errNoHistory):
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, map[string]string{"error": err.Error()})
}

type badRequest struct{ msg string }

func (b badRequest) Error() string { return b.msg }

var errNoHistory = errors.New("no run history: no `torchmem run` has written the store yet (or --db points elsewhere)")

func (s *Server) history() (*store.DB, error) {
	db, err := s.store()
	if err != nil {
		return nil, err
	}
	if db == nil {
		return nil, errNoHistory
	}
	return db, nil
}

func (s *Server) apiNode(w http.ResponseWriter, _ *http.Request) {
	b, _ := s.nodeBytes()
	if b == nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "no sample yet"})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b)
}

// apiRuns lists runs, newest first: ?status=, ?command=, ?limit= (default 100).
func (s *Server) apiRuns(w http.ResponseWriter, r *http.Request) {
	db, err := s.history()
	if err != nil {
		apiError(w, err)
		return
	}
	q := r.URL.Query()
	f := store.RunFilter{Status: store.Status(q.Get("status")), Command: q.Get("command")}
	if f.Limit, err = intParam(q.Get("limit"), 100, 1, 10000, "limit"); err != nil {
		apiError(w, err)
		return
	}
	runs, err := db.Runs(f)
	if err != nil {
		apiError(w, err)
		return
	}
	if runs == nil {
		runs = []store.Run{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"runs": runs})
}

func (s *Server) apiRun(w http.ResponseWriter, r *http.Request) {
	db, err := s.history()
	if err == nil {
		var run *store.Run
		if run, err = db.Run(r.PathValue("id")); err == nil {
			writeJSON(w, http.StatusOK, run)
			return
		}
	}
	apiError(w, err)
}

// apiSamples returns ?from= ≤ t ≤ ?to= (RFC 3339 or Unix milliseconds)
// in at most ?max_points buckets (each series its bucket maximum, host
// available its minimum: peaks survive every zoom level).
func (s *Server) apiSamples(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	maxPoints, err := intParam(q.Get("max_points"), DefaultMaxPoints, 10, MaxMaxPoints, "max_points")
	var from, to time.Time
	if err == nil {
		from, err = timeParam(q.Get("from"), "from")
	}
	if err == nil {
		to, err = timeParam(q.Get("to"), "to")
	}
	var db *store.DB
	if err == nil {
		db, err = s.history()
	}
	var run *store.Run
	if err == nil {
		run, err = db.Run(r.PathValue("id"))
	}
	var smp []store.Sample
	if err == nil {
		smp, err = db.Samples(run.ID, from, to, maxPoints)
	}
	if err != nil {
		apiError(w, err)
		return
	}
	if smp == nil {
		smp = []store.Sample{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"run": run.ID, "max_points": maxPoints, "samples": smp})
}

func (s *Server) apiEvents(w http.ResponseWriter, r *http.Request) {
	apiRunList(s, w, r, "events", func(db *store.DB, id string) ([]store.Event, error) { return db.Events(id) })
}

// apiSteps returns the newest ?limit= (default 2000) optimizer steps.
func (s *Server) apiSteps(w http.ResponseWriter, r *http.Request) {
	limit, err := intParam(r.URL.Query().Get("limit"), 2000, 1, 100000, "limit")
	if err != nil {
		apiError(w, err)
		return
	}
	apiRunList(s, w, r, "steps", func(db *store.DB, id string) ([]store.Step, error) { return db.Steps(id, limit) })
}

// apiRunList answers {"run": ID, key: list} with the list read of the run
// named in the path ([] rather than null when there is none).
func apiRunList[T any](s *Server, w http.ResponseWriter, r *http.Request, key string, read func(db *store.DB, id string) ([]T, error)) {
	db, err := s.history()
	var run *store.Run
	if err == nil {
		run, err = db.Run(r.PathValue("id"))
	}
	var list []T
	if err == nil {
		list, err = read(db, run.ID)
	}
	if err != nil {
		apiError(w, err)
		return
	}
	if list == nil {
		list = []T{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"run": run.ID, key: list})
}

// pageReport is `torchmem report RUN --html` served: a self-contained page
// with inline scripts, so it gets its own content security policy.
func (s *Server) pageReport(w http.ResponseWriter, r *http.Request) {
	db, err := s.history()
	var d *report.Data
	if err == nil {
		d, err = report.Load(db, r.PathValue("id"), 4000)
	}
	if err != nil {
		apiError(w, err)
		return
	}
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := report.WriteHTML(w, d, s.pageLang(r)); err != nil {
		s.logOnce(fmt.Sprintf("report %s: %v", d.Run.ID, err))
	}
}

func intParam(v string, def, lo, hi int, name string) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, badRequest{fmt.Sprintf("%s=%q: want an integer from %d to %d", name, v, lo, hi)}
	}
	return n, nil
}

// timeParam reads RFC 3339 or Unix milliseconds; "" is the zero time.
func timeParam(v, name string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.UnixMilli(ms), nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, badRequest{fmt.Sprintf("%s=%q: want RFC 3339 or Unix milliseconds", name, v)}
	}
	return t, nil
}
