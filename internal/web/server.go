package web

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	toolkitweb "github.com/prometheus/exporter-toolkit/web"
	"golang.org/x/text/language"

	"github.com/torchmem/torchmem/internal/metrics"
	"github.com/torchmem/torchmem/internal/procfs"
	"github.com/torchmem/torchmem/internal/sample"
	"github.com/torchmem/torchmem/internal/store"
)

// Collector takes samples; *sample.Sampler is one.
type Collector interface {
	Collect(ctx context.Context) (*sample.Sample, error)
}

// Config is what a Server serves.
type Config struct {
	// Sampler is sampled every Interval (default 1 s).
	Sampler  Collector
	Interval time.Duration
	// DBPath is the history store, opened read-only when it exists (and
	// retried each interval until it does); "" means no history.
	DBPath   string
	ProcRoot string // for the store's supervisor liveness check
	// Token, when set, is required on every request (see package doc).
	Token         string
	MetricsNoAuth bool
	// WebConfigFile is an exporter-toolkit web configuration (TLS, basic
	// auth, headers; ReadWebConfig checks it); "" serves plain HTTP.
	WebConfigFile string
	// Version is shown on pages and in torchmem_build_info.
	Version      string
	MaxProcesses int
	// NodeName is this node's name in torchmem_node_info (the cluster
	// view's node identity); "" exports none.
	NodeName string
	// NoRuntimeMetrics leaves the Go runtime collectors out of /metrics.
	NoRuntimeMetrics bool
	// ProcessSeries, MaxProcessSeries and ProcessSeriesWindow: the
	// per-process series and their created-series budget (metrics.Options).
	ProcessSeries       bool
	MaxProcessSeries    int
	ProcessSeriesWindow time.Duration
	// FirstScrapeWait bounds how long /metrics and the node API wait for
	// the first sample (DefaultFirstScrapeWait unless set; firstscrape.go).
	FirstScrapeWait time.Duration
	// KernelOOM, when set, follows this host's kernel log: its incidents
	// are served at /api/v1/oom and counted in torchmem_oom_incidents_total.
	KernelOOM OOMSource
	// Cluster, when set, answers /api/v1/cluster and the /cluster page
	// from the Prometheus that scrapes the agents (serve --prometheus).
	Cluster ClusterSource
	// Lang is the dashboard's language for a browser that names neither
	// zh nor en in Accept-Language (serve --lang, else the locale; lang.go).
	Lang language.Tag
	// Logf reports background problems once each (nil: discard).
	Logf func(format string, args ...any)
	// Now is the clock (time.Now unless set): the assets' modification
	// time and the history store's downsampling ages follow it. Network
	// write deadlines do not: the kernel checks them against the real clock.
	Now func() time.Time
}

// Server serves one node. Create it with New.
type Server struct {
	cfg      Config
	host     string
	session  string // the browser cookie's value when a token is set
	registry *prometheus.Registry
	procFS   procfs.FS

	mu    sync.RWMutex
	db    *store.DB
	state *metrics.State
	node  *Node
	// nodeJSON is node encoded on the first request after a sample (nil
	// until then), shared by every API call and live stream until the next.
	nodeJSON []byte
	changed  chan struct{} // closed and replaced at each update
	// ready is closed when the first sample is published (firstscrape.go).
	ready     chan struct{}
	readyOnce sync.Once
	logged    map[string]bool
	streams   chan struct{} // bounds concurrent SSE streams
	oom       oomLog        // what the kernel log said (Config.KernelOOM)
	cluster   clusterCache  // the latest answer of Config.Cluster
	// modTime is the dashboard assets' modification time: the server's
	// start, so browser caches revalidate after an upgrade.
	modTime time.Time
	// ticker paces sampling and the live stream's keep-alives (newTicker
	// unless a test sets it): it returns the ticks and a stop function.
	ticker func(d time.Duration) (<-chan time.Time, func())
}

// newTicker is a real time.Ticker as the ticks and stop function of Server.ticker.
func newTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// maxStreams bounds concurrent live streams, so a runaway page cannot
// make the agent hold unbounded connections.
const maxStreams = 32

// New returns a Server; it does not sample until Run.
func New(cfg Config) (*Server, error) {
	if cfg.Sampler == nil {
		return nil, errors.New("web: no sampler")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.FirstScrapeWait <= 0 {
		cfg.FirstScrapeWait = DefaultFirstScrapeWait
	}
	host, _ := os.Hostname()
	var err error
	s := &Server{cfg: cfg, host: host, changed: make(chan struct{}), logged: map[string]bool{},
		state:   &metrics.State{SampleErr: errors.New("no sample yet")},
		streams: make(chan struct{}, maxStreams), modTime: cfg.Now(), ticker: newTicker, ready: make(chan struct{})}
	if s.procFS, err = procfs.NewFS(s.procRoot()); err != nil {
		return nil, err
	}
	if cfg.Token != "" {
		if s.session, err = sessionValue(cfg.Token); err != nil {
			return nil, err
		}
	}
	s.registry = metrics.NewRegistry(s.metricsState, metrics.Options{
		MaxProcesses: cfg.MaxProcesses, Version: cfg.Version, NoRuntime: cfg.NoRuntimeMetrics, NodeName: cfg.NodeName,
		ProcessSeries: cfg.ProcessSeries, MaxProcessSeries: cfg.MaxProcessSeries, ProcessSeriesWindow: cfg.ProcessSeriesWindow,
		Notice: func(n string) { s.cfg.Logf("%s", n) }})
	return s, nil
}

func (s *Server) metricsState() *metrics.State {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.state
}

// Handler returns every route behind the read-only and auth checks.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.waitFirst(promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.Handle("GET /api/v1/node", s.waitFirst(http.HandlerFunc(s.apiNode)))
	mux.HandleFunc("GET /api/v1/stream", s.apiStream)
	mux.HandleFunc("GET /api/v1/runs", s.apiRuns)
	mux.HandleFunc("GET /api/v1/oom", s.apiOOM)
	mux.HandleFunc("GET /api/v1/runs/{id}", s.apiRun)
	mux.HandleFunc("GET /api/v1/runs/{id}/samples", s.apiSamples)
	mux.HandleFunc("GET /api/v1/runs/{id}/events", s.apiEvents)
	mux.HandleFunc("GET /api/v1/runs/{id}/steps", s.apiSteps)
	mux.HandleFunc("GET /runs/{id}/report.html", s.pageReport)
	s.clusterRoutes(mux)
	s.pages(mux)
	return readOnly(s.auth(securityHeaders(mux)))
}

// NewHTTPServer wraps h with timeouts: slow or idle clients cannot hold
// the agent's connections (the live stream extends its own write deadline).
func NewHTTPServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: 60 * time.Second, MaxHeaderBytes: 64 << 10}
}

// Serve serves on ln until ctx is done, then shuts down gracefully. With
// Config.WebConfigFile, exporter-toolkit serves it: TLS, basic auth and
// headers as that file says, re-read for each connection and request, so
// a renewed certificate needs no restart.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := NewHTTPServer(s.Handler())
	hs.BaseContext = func(net.Listener) context.Context { return ctx }
	hs.ErrorLog = log.New(serverLog{s.cfg.Logf}, "", 0)
	flags := &toolkitweb.FlagConfig{WebConfigFile: &s.cfg.WebConfigFile}
	errc := make(chan error, 1)
	go func() { errc <- toolkitweb.Serve(ln, hs, flags, s.toolkitLogger()) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
		return nil
	}
}

// logOnce reports a background problem the first time it is seen.
func (s *Server) logOnce(msg string) {
	s.mu.Lock()
	seen := s.logged[msg]
	s.logged[msg] = true
	s.mu.Unlock()
	if !seen {
		s.cfg.Logf("%s", msg)
	}
}
