package web

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/torchmem/torchmem/internal/cluster"
)

// ClusterSource answers the cluster page: every node's jobs, GPUs and
// OOMs as the Prometheus that scrapes the agents has them.
// *cluster.Client is one (serve --prometheus).
type ClusterSource interface {
	Fetch(ctx context.Context) (*cluster.Summary, error)
}

var _ ClusterSource = (*cluster.Client)(nil)

// clusterReuse is how long one answer serves every open cluster page:
// each Fetch is nine queries to Prometheus, and ten people watching the
// page should not make ten times the load of one.
const clusterReuse = 2 * time.Second

// clusterCache holds the latest answer; one Fetch runs at a time.
type clusterCache struct {
	mu   sync.Mutex
	at   time.Time
	sum  *cluster.Summary
	err  error
	done bool
}

var errNoCluster = errors.New("no cluster view: serve was started without --prometheus URL")

func (s *Server) clusterRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/v1/cluster", s.apiCluster)
}

// apiCluster is GET /api/v1/cluster: the summary (cluster.Summary's
// JSON, as top --prometheus --json prints it), 404 without
// --prometheus, 502 when Prometheus did not answer.
func (s *Server) apiCluster(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Cluster == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": errNoCluster.Error()})
		return
	}
	sum, err := s.clusterSummary(r.Context())
	if err != nil {
		writeJSON(w, http.StatusBadGateway, map[string]string{"error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, sum)
}

func (s *Server) clusterSummary(ctx context.Context) (*cluster.Summary, error) {
	c := &s.cluster
	c.mu.Lock()
	defer c.mu.Unlock()
	now := s.cfg.Now()
	if c.done && now.Sub(c.at) >= 0 && now.Sub(c.at) < clusterReuse {
		return c.sum, c.err
	}
	c.sum, c.err = s.cfg.Cluster.Fetch(ctx)
	c.at, c.done = now, ctx.Err() == nil // a page that left mid-fetch leaves no answer behind
	return c.sum, c.err
}
