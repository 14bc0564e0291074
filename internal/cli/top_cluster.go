package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/torchmem/torchmem/internal/cluster"
	"github.com/torchmem/torchmem/internal/tui"
	"github.com/torchmem/torchmem/internal/web"
)

// clusterInterval is the cluster view's refresh when --interval is not
// given: Prometheus's data moves once a scrape (15 s by default), so
// asking it every second would redraw the same figures.
const clusterInterval = 5 * time.Second

type clusterFlags struct {
	url, tokenFile, httpConfig string
	window, timeout            time.Duration
	intervalSet                bool
}

// addClusterFlags adds the cluster view's flags; what says what
// --prometheus does in the command.
func addClusterFlags(fl *pflag.FlagSet, f *clusterFlags, what string) {
	fl.StringVar(&f.url, "prometheus", "", what)
	fl.StringVar(&f.tokenFile, "prometheus-token-file", "", "file holding a bearer token for --prometheus")
	fl.StringVar(&f.httpConfig, "http.config.file", "", "Prometheus HTTP client configuration for --prometheus (basic_auth, authorization, tls_config), as promtool reads it")
	fl.DurationVar(&f.window, "window", cluster.DefaultWindow, "with --prometheus: count OOMs, and keep listing silent agents, this far back")
	fl.DurationVar(&f.timeout, "prometheus-timeout", cluster.DefaultTimeout, "with --prometheus: give up on an answer after this long")
}

// clusterClient is the cluster view's client of f, or nil without --prometheus.
func clusterClient(f clusterFlags) (*cluster.Client, error) {
	if f.url == "" {
		return nil, nil
	}
	return cluster.New(cluster.Options{URL: f.url, TokenFile: f.tokenFile, HTTPConfigFile: f.httpConfig, Window: f.window, Timeout: f.timeout})
}

// serveCluster is serve's source of the /cluster page: nil (no page
// data, a 404 that says so) without --prometheus.
func serveCluster(f clusterFlags) (web.ClusterSource, error) {
	c, err := clusterClient(f)
	if c == nil || err != nil {
		return nil, err
	}
	return c, nil
}

// runTopCluster is top --prometheus: one table (--once, or not a
// terminal), JSON (--json), or a view refreshed every --interval.
func runTopCluster(ctx context.Context, env *Env, f topFlags) error {
	c, err := clusterClient(f.cluster)
	if err != nil {
		return err
	}
	lang := env.lang()
	if f.json || f.once || !isTerminal(env.Stdout) {
		sum, err := c.Fetch(ctx)
		if err != nil {
			return err
		}
		if f.json {
			return writeJSON(env.Stdout, sum)
		}
		for _, l := range clusterLines(sum, lang, topWidth(f.width)) {
			if _, err := fmt.Fprintln(env.Stdout, l); err != nil {
				return err
			}
		}
		return nil
	}
	interval := clusterInterval
	if f.cluster.intervalSet {
		interval = f.interval
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	t := clusterCat.T(lang)
	return tui.RunRefresh(ctx, tui.RefreshConfig{
		Fetch: func(ctx context.Context) (func(int) []string, error) {
			sum, err := c.Fetch(ctx)
			if err != nil {
				return nil, err
			}
			return func(w int) []string { return clusterLines(sum, lang, w) }, nil
		},
		Interval: interval, Loading: t("loading", f.cluster.url), Footer: t("footer", interval),
		ErrorLine: func(err error) string { return t("error", err, interval) },
		In:        topKeys(env.Stdin), Out: env.Stdout, Lang: lang,
	})
}
