package web

import (
	"context"
	"net/http"
	"sync"

	"github.com/torchmem/torchmem/internal/metrics"
	"github.com/torchmem/torchmem/internal/oomexplain"
)

// OOMSource follows this host's kernel log and calls emit with each
// out-of-memory incident, explained, as it completes
// (oomexplain.Follow); it returns when ctx ends or the log fails.
type OOMSource func(ctx context.Context, emit func(oomexplain.Incident)) error

// oomKeep bounds the incidents the agent keeps for /api/v1/oom: a host
// in an OOM loop cannot grow it (the counters keep counting).
const oomKeep = 128

// oomLog is what serve saw in the kernel log: the newest incidents and
// counts by kind and verdict.
type oomLog struct {
	mu      sync.Mutex
	watched bool
	recent  []oomexplain.Incident // oldest first, at most oomKeep
	counts  map[metrics.OOMKey]int64
	dropped int
	err     error
}

func (l *oomLog) add(inc oomexplain.Incident) {
	inc.Related = nil // indexes into a slice that is gone
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.counts == nil {
		l.counts = map[metrics.OOMKey]int64{}
	}
	v := ""
	if inc.Explanation != nil {
		v = string(inc.Explanation.Verdict)
	}
	l.counts[metrics.OOMKey{Kind: string(inc.Kind), Verdict: v}]++
	if len(l.recent) == oomKeep {
		l.recent = append(l.recent[:0], l.recent[1:]...)
		l.dropped++
	}
	l.recent = append(l.recent, inc)
}

// fill copies the counters into a scrape's state.
func (l *oomLog) fill(st *metrics.State) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st.OOMWatched, st.OOMErr = l.watched, l.err
	st.OOMIncidents = make(map[metrics.OOMKey]int64, len(l.counts))
	for k, n := range l.counts {
		st.OOMIncidents[k] = n
	}
}

// watchOOM runs the configured source until ctx ends; a source that
// cannot start (not root, no journal) is reported once and leaves the
// series absent-with-failure, never stops the agent.
func (s *Server) watchOOM(ctx context.Context) {
	if s.cfg.KernelOOM == nil {
		return
	}
	s.oom.mu.Lock()
	s.oom.watched = true
	s.oom.mu.Unlock()
	err := s.cfg.KernelOOM(ctx, s.oom.add)
	if err != nil && ctx.Err() == nil {
		s.logOnce("kernel log: " + err.Error())
		s.oom.mu.Lock()
		s.oom.err = err
		s.oom.mu.Unlock()
	}
}

// oomReport is /api/v1/oom: the newest incidents (docs/oom.md's schema),
// and how many older ones were let go.
type oomReport struct {
	Watched   bool                  `json:"watched"`
	Error     string                `json:"error,omitempty"`
	Dropped   int                   `json:"dropped"`
	Incidents []oomexplain.Incident `json:"incidents"`
}

func (s *Server) apiOOM(w http.ResponseWriter, _ *http.Request) {
	s.oom.mu.Lock()
	rep := oomReport{Watched: s.oom.watched, Dropped: s.oom.dropped,
		Incidents: append([]oomexplain.Incident{}, s.oom.recent...)}
	if s.oom.err != nil {
		rep.Error = s.oom.err.Error()
	}
	s.oom.mu.Unlock()
	writeJSON(w, http.StatusOK, rep)
}
