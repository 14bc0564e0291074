package metrics

import (
	"errors"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Options configures the registry.
type Options struct {
	// MaxProcesses bounds the processes exported with a pid label
	// (DefaultMaxProcesses unless set).
	MaxProcesses int
	// Version is torchmem's version, exported in torchmem_build_info.
	Version string
	// NoRuntime leaves out the Go runtime and process collectors (tests).
	NoRuntime bool
	// NodeName is exported as torchmem_node_info{node}; "" exports none.
	NodeName string
	// ProcessSeries turns on the per-process series (pid label); off, a
	// job has job-level and per-role series only (procs.go, series.go).
	ProcessSeries bool
	// MaxProcessSeries bounds the per-process label sets created per
	// ProcessSeriesWindow (DefaultMaxProcessSeries, DefaultProcessSeriesWindow
	// unless set); Notice is told once a window when it is spent.
	MaxProcessSeries    int
	ProcessSeriesWindow time.Duration
	Notice              func(string)
}

// DefaultMaxProcesses is the default bound on per-process series.
const DefaultMaxProcesses = 256

// errAbsent means a source is not configured: it exports no success series.
var errAbsent = errors.New("source absent")

// source is one collector: it formats its part of a State. A returned
// error sets its torchmem_scrape_success to 0 (errAbsent: no series).
type source interface {
	name() string
	describe(ch chan<- *prometheus.Desc)
	collect(st *State, ch chan<- prometheus.Metric) error
}

// sources is the one place collectors are registered.
func sources(o Options) []source {
	return []source{hostSource{}, gpuSource{}, newProcSource(o), cgroupSource{}, storeSource{}, oomSource{}, nodeSource{o.NodeName}}
}

var (
	scrapeSuccess = prometheus.NewDesc("torchmem_scrape_success",
		"1 when the source answered at the latest sample, 0 when it failed (its series are then missing or partial).",
		[]string{"source"}, nil)
	sampleTime = prometheus.NewDesc("torchmem_sample_timestamp_seconds",
		"Unix time of the sample this scrape exposes (taken every --interval, not at scrape time).", nil, nil)
	sampleCost = prometheus.NewDesc("torchmem_sample_duration_seconds",
		"Wall time of the latest sample by tier: fast (status, cgroup, PSI, GPU) and pss (smaps_rollup reads).",
		[]string{"tier"}, nil)
)

// node is the registered collector: it runs every source over one State.
type node struct {
	state   func() *State
	sources []source
}

func (n node) Describe(ch chan<- *prometheus.Desc) {
	ch <- scrapeSuccess
	ch <- sampleTime
	ch <- sampleCost
	for _, s := range n.sources {
		s.describe(ch)
	}
}

func (n node) Collect(ch chan<- prometheus.Metric) {
	st := n.state()
	if st == nil {
		st = &State{SampleErr: errors.New("no sample yet")}
	}
	if smp := st.Sample; smp != nil {
		gauge(ch, sampleTime, float64(smp.Time.UnixNano())/1e9)
		gauge(ch, sampleCost, smp.Tier.FastSeconds, "fast")
		gauge(ch, sampleCost, smp.Tier.PSSSeconds, "pss")
	}
	for _, s := range n.sources {
		err := s.collect(st, ch)
		if errors.Is(err, errAbsent) {
			continue
		}
		ok := 0.0
		if err == nil {
			ok = 1
		}
		gauge(ch, scrapeSuccess, ok, s.name())
	}
}

// NewRegistry returns a registry exposing state() at each scrape, with
// torchmem_build_info and, unless opts.NoRuntime, the Go runtime and
// process collectors of the agent itself.
func NewRegistry(state func() *State, opts Options) *prometheus.Registry {
	if opts.MaxProcesses <= 0 {
		opts.MaxProcesses = DefaultMaxProcesses
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(node{state: state, sources: sources(opts)})
	build := prometheus.NewGauge(prometheus.GaugeOpts{Name: "torchmem_build_info",
		Help: "Always 1; the version label is the torchmem agent's version.", ConstLabels: prometheus.Labels{"version": opts.Version}})
	build.Set(1)
	reg.MustRegister(build)
	if !opts.NoRuntime {
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	return reg
}

func gauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	emit(ch, d, prometheus.GaugeValue, v, labels)
}

func counter(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	emit(ch, d, prometheus.CounterValue, v, labels)
}

// emit sends one sample. Label values come from the host (command lines,
// GPU names) and may be invalid UTF-8, which client_golang rejects: they
// are repaired, and any other error becomes an invalid metric that the
// handler reports without failing the scrape, never a panic.
func emit(ch chan<- prometheus.Metric, d *prometheus.Desc, t prometheus.ValueType, v float64, labels []string) {
	for i, l := range labels {
		if !utf8.ValidString(l) {
			labels[i] = strings.ToValidUTF8(l, "\uFFFD")
		}
	}
	m, err := prometheus.NewConstMetric(d, t, v, labels...)
	if err != nil {
		m = prometheus.NewInvalidMetric(d, err)
	}
	ch <- sparse(m, labels)
}

// desc builds a Desc; every name gets the torchmem_ prefix.
func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("torchmem_"+name, help, labels, nil)
}

func itoa(n int) string { return strconv.Itoa(n) }

// Names returns every metric name torchmem itself exports (sorted; the Go
// runtime and process collectors' names are not included), for checks of
// dashboards and alert rules against the real set.
func Names() []string {
	ch := make(chan *prometheus.Desc, 64)
	go func() {
		node{sources: sources(Options{})}.Describe(ch)
		close(ch)
	}()
	names := []string{"torchmem_build_info"}
	for d := range ch {
		if m := fqName.FindStringSubmatch(d.String()); m != nil {
			names = append(names, m[1])
		}
	}
	sort.Strings(names)
	return names
}

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)
