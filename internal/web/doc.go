// Package web is the HTTP side of `torchmem serve`: Prometheus /metrics, a
// read-only JSON API (/api/v1/…), a server-sent-events live stream, and a
// dashboard (node, runs, one run) whose static files are embedded, with
// uPlot from internal/webassets: nothing is fetched from the network.
//
// A Server samples the node every Config.Interval in one goroutine (Run);
// every endpoint answers from that latest state or from the history store,
// so neither scrapes nor page loads add work on the host.
//
// Security: CheckListen refuses a non-loopback address without a token,
// basic auth or an explicit insecure flag, and warns when a token or a
// password would cross the network without TLS; with a token every
// endpoint wants "Authorization: Bearer <token>" (or the session cookie a
// /?token=… visit sets, an HMAC of the token, never the token itself),
// except /metrics when Config.MetricsNoAuth. Config.WebConfigFile hands
// TLS and basic auth to exporter-toolkit. Only GET and HEAD are served.
//
// API:
//
//	New(cfg Config) (*Server, error)
//	(*Server) Run(ctx context.Context)            // the sampling loop
//	(*Server) Handler() http.Handler
//	(*Server) Serve(ctx context.Context, ln net.Listener) error
//	NewHTTPServer(h http.Handler) *http.Server    // the timeouts
//	CheckListen(addr string, a Access) (warning string, err error)
//	ReadToken(path string) (string, error)
//	ReadWebConfig(path string) (WebConfig, error) // --web.config.file
//	Node, LiveRun                                 // /api/v1/node
package web
