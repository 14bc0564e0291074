package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/torchmem/torchmem/internal/identity"
	"github.com/torchmem/torchmem/internal/metrics"
	"github.com/torchmem/torchmem/internal/oomexplain"
	"github.com/torchmem/torchmem/internal/sample"
	"github.com/torchmem/torchmem/internal/store"
	"github.com/torchmem/torchmem/internal/web"
)

func init() { register("serve", newServeCmd) }

// serveDefaultListen is the documented default: loopback only, port 10464
// (the systemd unit, the DaemonSet, the Helm chart and the scrape configs use
// it). It was 9464, the OpenTelemetry Prometheus exporter's port; docs/serve.md
// says why 10464.
const serveDefaultListen = "127.0.0.1:10464"

// PSS costs the kernel a page-table walk, ~5 ms per torch process here
// (bench/results/top.md): an always-on agent reads it rarely, so a
// 200-process job costs ~1 s of CPU per period, 0.3% of a core at 5 min;
// and only a large RSS move (25%, not top's 5%) re-reads it early, since
// DataLoader workers' RSS moves with every batch.
const (
	servePSSPeriod    = 5 * time.Minute
	servePSSRSSChange = 0.25
)

type serveFlags struct {
	listen, db, tokenFile, gpuFake string
	nodeName                       string
	webConfig                      string
	insecure, metricsNoAuth        bool
	noKernelLog                    bool
	interval, pssPeriod            time.Duration
	maxProcs                       int
	processMetrics                 bool
	maxProcSeries                  int
	procSeriesWindow               time.Duration
	podResources                   string
	cluster                        clusterFlags // --prometheus: the /cluster page (top_cluster.go)
}

func newServeCmd(env *Env) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Node agent: Prometheus /metrics, a JSON API and a web dashboard of live memory and run history",
		Long: `serve samples this node every --interval (GPUs, PyTorch jobs with RSS, PSS, USS,
swap and GPU memory per process, cgroup limits, host memory, PSI, and the
allocator figures of jobs under torchmem run) and serves:

  /               the node, live        /runs, /runs/ID   run history, charts
  /metrics        Prometheus exposition /api/v1/...        JSON (docs/serve.md)

It listens on 127.0.0.1 only unless told otherwise; any other address needs
--token-file (a bearer token every request must carry), basic auth in
--web.config.file, or --insecure. --web.config.file (the Prometheus exporters'
format) turns on TLS; a token or password served without it is warned about.
It never changes anything on the host.`,
		Example: `  torchmem serve                                   # http://127.0.0.1:10464/
  torchmem serve --listen :10464 --token-file /etc/torchmem/token --web.config.file /etc/torchmem/web.yml
  curl -H "Authorization: Bearer $(cat token)" http://node:10464/api/v1/node`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runServe(cmd.Context(), env, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.listen, "listen", serveDefaultListen, "address to listen on (host:port)")
	fl.StringVar(&f.db, "db", "", "run history database, read only (default: the store torchmem run writes)")
	fl.StringVar(&f.tokenFile, "token-file", "", "file holding the bearer token every request must carry (mode 0600)")
	fl.StringVar(&f.webConfig, "web.config.file", "", "exporter-toolkit web configuration: TLS (tls_server_config), basic auth (basic_auth_users), headers")
	fl.BoolVar(&f.insecure, "insecure", false, "allow a non-loopback --listen without a token (prints a warning)")
	fl.BoolVar(&f.metricsNoAuth, "metrics-no-auth", false, "serve /metrics without the token (the rest still needs it)")
	fl.BoolVar(&f.noKernelLog, "no-kernel-log", false, "do not follow the kernel log for OOM incidents (/api/v1/oom, torchmem_oom_incidents_total)")
	fl.DurationVar(&f.interval, "interval", time.Second, "sampling interval (what /metrics, the API and the live stream show)")
	fl.DurationVar(&f.pssPeriod, "pss-period", servePSSPeriod, "longest reuse of a PSS figure (smaps_rollup, ~5 ms of kernel time per torch process); negative: never read PSS")
	fl.StringVar(&f.nodeName, "node-name", "", "this node's name in torchmem_node_info, which the cluster view (top --prometheus) shows (default: $NODE_NAME, else the host name)")
	fl.BoolVar(&f.processMetrics, "process-metrics", false, "export per-process series (pid label); off, jobs have job-level and per-role series only")
	fl.IntVar(&f.maxProcs, "max-processes", 256, "with --process-metrics: at most this many processes get per-process series at once")
	fl.IntVar(&f.maxProcSeries, "max-process-series", metrics.DefaultMaxProcessSeries, "with --process-metrics: at most this many per-process label sets are created per --process-series-window")
	fl.DurationVar(&f.procSeriesWindow, "process-series-window", metrics.DefaultProcessSeriesWindow, "the window --max-process-series counts in")
	fl.StringVar(&f.podResources, "pod-resources-socket", identity.DefaultPodResourcesSocket, "the kubelet's pod-resources API socket (pod names, namespaces, containers, assigned GPUs); \"\": off")
	fl.StringVar(&f.gpuFake, "gpu-fake", "", "read GPUs from a recorded JSON file instead of the driver (tests, demos)")
	_ = fl.MarkHidden("gpu-fake")
	addClusterFlags(fl, &f.cluster, "serve the /cluster page (every agent's node, jobs, GPUs and OOMs) from this Prometheus (http://host:9090)")
	return cmd
}

func runServe(ctx context.Context, env *Env, f serveFlags) error {
	if f.interval < 100*time.Millisecond {
		return fmt.Errorf("--interval %s: at least 100ms", f.interval)
	}
	token, wc, err := serveAccess(env, f)
	if err != nil {
		return err
	}
	srv, closeGPU, err := serveServer(env, f, token)
	if err != nil {
		return err
	}
	defer closeGPU()
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", f.listen, err)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	scheme := "http"
	if wc.TLS {
		scheme = "https"
	}
	fmt.Fprintf(env.Stderr, "torchmem: serving %s://%s/ (metrics at /metrics)\n", scheme, ln.Addr())
	go srv.Run(ctx)
	return srv.Serve(ctx, ln)
}

// serveAccess reads the token and the web configuration and checks that
// they protect --listen; a refusal is exit status 2, a warning is printed.
func serveAccess(env *Env, f serveFlags) (token string, wc web.WebConfig, err error) {
	if f.tokenFile != "" {
		if token, err = web.ReadToken(f.tokenFile); err != nil {
			return "", wc, err
		}
	}
	if f.webConfig != "" {
		if wc, err = web.ReadWebConfig(f.webConfig); err != nil {
			return "", wc, err
		}
	}
	// One Authorization header cannot carry a bearer token and a password,
	// and exporter-toolkit asks for the password first on every request.
	if token != "" && wc.BasicAuth {
		return "", wc, &ExitError{Code: 2, Err: fmt.Errorf("--token-file and basic_auth_users in --web.config.file %s: use one of them", f.webConfig)}
	}
	warning, err := web.CheckListen(f.listen, web.Access{Token: token != "", BasicAuth: wc.BasicAuth, TLS: wc.TLS, Insecure: f.insecure})
	if err != nil {
		return "", wc, &ExitError{Code: 2, Err: err}
	}
	if warning != "" {
		fmt.Fprintln(env.Stderr, "torchmem: "+warning)
	}
	return token, wc, nil
}

// serveServer builds the sampler and the web server over env's roots.
func serveServer(env *Env, f serveFlags, token string) (*web.Server, func(), error) {
	backend, notice, err := topGPU(env, f.gpuFake)
	if err != nil {
		return nil, nil, err
	}
	if notice != "" {
		fmt.Fprintln(env.Stderr, "torchmem: "+notice)
	}
	s, err := sample.New(sample.Options{ProcRoot: env.ProcRoot, SysRoot: env.SysRoot, GPU: backend, GPUNotice: notice,
		PSSPeriod: f.pssPeriod, PSSRSSChange: servePSSRSSChange, Identity: identityResolver(f.podResources)})
	if err != nil {
		backend.Close()
		return nil, nil, err
	}
	cl, err := serveCluster(f.cluster)
	if err != nil {
		backend.Close()
		return nil, nil, err
	}
	db := f.db
	if db == "" {
		db = store.DefaultPath()
	}
	srv, err := web.New(web.Config{Sampler: s, Interval: f.interval, DBPath: db, ProcRoot: env.ProcRoot, Token: token,
		MetricsNoAuth: f.metricsNoAuth, WebConfigFile: f.webConfig, Version: Version, MaxProcesses: f.maxProcs,
		NodeName:      metrics.NodeName(f.nodeName, os.Getenv, os.Hostname),
		ProcessSeries: f.processMetrics, MaxProcessSeries: f.maxProcSeries, ProcessSeriesWindow: f.procSeriesWindow,
		KernelOOM: serveKernelOOM(env, f.noKernelLog),
		Cluster:   cl, Lang: env.lang(),
		Logf: func(format string, a ...any) { fmt.Fprintf(env.Stderr, "torchmem: "+format+"\n", a...) }})
	if err != nil {
		backend.Close()
		return nil, nil, err
	}
	return srv, func() { backend.Close() }, nil
}

// serveKernelOOM follows this boot's kernel log from its start (the
// counters then mean "since boot", like /proc/vmstat oom_kill) and on,
// explaining each incident as `torchmem oom` does.
func serveKernelOOM(env *Env, off bool) web.OOMSource {
	if off {
		return nil
	}
	return func(ctx context.Context, emit func(oomexplain.Incident)) error {
		return oomexplain.Follow(ctx, oomexplain.LogConfig{ProcRoot: env.ProcRoot}, oomexplain.Options{}, oomHostContext(env), emit)
	}
}
