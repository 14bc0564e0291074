package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
)

// Options says which Prometheus to ask and how.
type Options struct {
	// URL is Prometheus's base URL (http://host:9090, or a path prefix
	// behind a proxy). User info in it is sent as basic auth.
	URL string
	// TokenFile holds a bearer token sent with every query.
	TokenFile string
	// HTTPConfigFile is a Prometheus HTTP client configuration, the file
	// promtool's --http.config.file reads: basic_auth, authorization,
	// oauth2, tls_config, proxy_url.
	HTTPConfigFile string
	// Timeout bounds one Fetch (DefaultTimeout unless set).
	Timeout time.Duration
	// Window is how far back OOMs count and silent agents stay listed
	// (DefaultWindow unless set).
	Window time.Duration
	// Now is the clock: the time each Fetch asks about (time.Now unless set).
	Now func() time.Time
}

// DefaultTimeout bounds one Fetch: nine instant queries that a healthy
// Prometheus answers in milliseconds; a longer wait is a Prometheus in
// trouble, and a live view should say so rather than hang.
const DefaultTimeout = 10 * time.Second

// MinWindow is the shortest window: increase() needs two samples of a
// counter in it, and scrape intervals of 30 s and 1 m are common.
const MinWindow = 2 * time.Minute

// Client fetches summaries from one Prometheus.
type Client struct {
	api  v1.API
	opts Options
}

// New checks the options and builds the HTTP client; it sends nothing.
func New(o Options) (*Client, error) {
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--prometheus %q: want an http:// or https:// URL", o.URL)
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	if o.Window < MinWindow {
		return nil, fmt.Errorf("--window %s: at least %s (increase() needs two scrapes in it)", o.Window, MinWindow)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	rt, err := roundTripper(o)
	if err != nil {
		return nil, err
	}
	c, err := api.NewClient(api.Config{Address: o.URL, RoundTripper: rt})
	if err != nil {
		return nil, fmt.Errorf("--prometheus %q: %w", o.URL, err)
	}
	return &Client{api: v1.NewAPI(c), opts: o}, nil
}

// roundTripper carries the credentials: the HTTP config file's (TLS,
// basic auth, authorization) and, over them, the bearer token file's.
func roundTripper(o Options) (http.RoundTripper, error) {
	rt := api.DefaultRoundTripper
	if o.HTTPConfigFile != "" {
		cfg, _, err := config.LoadHTTPConfigFile(o.HTTPConfigFile)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", o.HTTPConfigFile, err)
		}
		if rt, err = config.NewRoundTripperFromConfig(*cfg, "torchmem"); err != nil {
			return nil, fmt.Errorf("%s: %w", o.HTTPConfigFile, err)
		}
	}
	if o.TokenFile != "" {
		b, err := os.ReadFile(o.TokenFile)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", o.TokenFile, err)
		}
		tok := strings.TrimSpace(string(b))
		if tok == "" {
			return nil, fmt.Errorf("%s: empty token", o.TokenFile)
		}
		rt = bearer{token: tok, next: rt}
	}
	return rt, nil
}

// bearer adds the token to each request (a clone: RoundTrippers must
// not change the caller's request).
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// Fetch runs every query at one instant and assembles the answer. Any
// failed query fails the Fetch with one line naming Prometheus's URL: a
// view missing, say, the OOMs would read as a cluster without OOMs.
func (c *Client) Fetch(ctx context.Context) (*Summary, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	at := c.opts.Now()
	qs := Queries(c.opts.Window)
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		res      = Results{}
		errs     []error
		warnings []string
	)
	for name, q := range qs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, warn, _, err := c.api.Query(ctx, q, at)
			mu.Lock()
			defer mu.Unlock()
			warnings = append(warnings, warn...)
			if err != nil {
				errs = append(errs, queryError(q, err))
				return
			}
			if vec, ok := v.(model.Vector); ok {
				res[name] = vec
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return nil, c.fetchError(ctx, errs)
	}
	sum := Assemble(res, at, c.opts.Window)
	sum.Prometheus = c.opts.URL
	slices.Sort(warnings)
	sum.Warnings = append(sum.Warnings, slices.Compact(warnings)...)
	return sum, nil
}

// queryError names the query only where Prometheus faulted it (bad
// PromQL, a failed evaluation): a refused connection or a 401 is the same
// for every query, and the PromQL would only lengthen the line.
func queryError(q string, err error) error {
	var apiErr *v1.Error
	if !errors.As(err, &apiErr) {
		return err
	}
	switch apiErr.Type {
	case v1.ErrClient:
		if strings.HasSuffix(apiErr.Msg, " 401") || strings.HasSuffix(apiErr.Msg, " 403") {
			return fmt.Errorf("HTTP %s: wrong or missing credentials (--prometheus-token-file, --http.config.file)", apiErr.Msg[len(apiErr.Msg)-3:])
		}
		return fmt.Errorf("HTTP %s", strings.TrimPrefix(apiErr.Msg, "client error: "))
	case v1.ErrBadData, v1.ErrExec, v1.ErrTimeout, v1.ErrCanceled:
		return fmt.Errorf("query %s: %w", q, err)
	}
	return err
}

// fetchError is one line: a Prometheus that is down fails every query
// the same way, so the first error stands for all of them.
func (c *Client) fetchError(ctx context.Context, errs []error) error {
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("Prometheus at %s did not answer within %s", c.opts.URL, c.opts.Timeout)
	}
	return fmt.Errorf("Prometheus at %s: %w", c.opts.URL, errs[0])
}
