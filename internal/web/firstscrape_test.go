package web

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/sample"
	"github.com/torchmem/torchmem/internal/sample/sampletest"
)

// slowCollector takes its samples after a delay, as a first sample that
// reads every process's PSS does; gate, when set, holds it until closed.
type slowCollector struct {
	s     *sample.Sampler
	delay time.Duration
	gate  chan struct{}
}

func (c slowCollector) Collect(ctx context.Context) (*sample.Sample, error) {
	if c.gate != nil {
		select {
		case <-c.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	time.Sleep(c.delay)
	return c.s.Collect(ctx)
}

// startServe starts Run and Serve together, as `torchmem serve` does, on a
// real listener, and returns the base URL.
func startServe(t *testing.T, cfg Config) string {
	t.Helper()
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go srv.Run(ctx)
	go func() { _ = srv.Serve(ctx, ln); close(served) }()
	t.Cleanup(func() { cancel(); <-served })
	return "http://" + ln.Addr().String()
}

func scrapeOnce(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("scrape: %d %v", resp.StatusCode, err)
	}
	return string(b)
}

func fixtureSampler(t *testing.T) *sample.Sampler {
	t.Helper()
	tree, err := sampletest.WriteJobTree(t.TempDir(), 4)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sample.New(sample.Options{ProcRoot: tree.ProcRoot, SysRoot: tree.SysRoot})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestFirstScrapeIsComplete: a scrape made the moment the agent listens,
// before its first sample (which takes 300 ms here), gets every source's
// series, not torchmem_scrape_success 0 and host series only.
func TestFirstScrapeIsComplete(t *testing.T) {
	url := startServe(t, Config{Sampler: slowCollector{s: fixtureSampler(t), delay: 300 * time.Millisecond},
		Interval: time.Hour, NoRuntimeMetrics: true})
	out := scrapeOnce(t, url)
	for _, want := range []string{`torchmem_scrape_success{source="processes"} 1`, `torchmem_scrape_success{source="host"} 1`,
		"torchmem_job_processes{", "torchmem_host_memory_available_bytes "} {
		if !strings.Contains(out, want) {
			t.Errorf("first scrape lacks %s:\n%s", want, out)
		}
	}
}

// TestFirstScrapeWaitIsBounded: a sampler that never answers does not
// hold the scrape past FirstScrapeWait; it answers with the sources at 0.
func TestFirstScrapeWaitIsBounded(t *testing.T) {
	gate := make(chan struct{})
	defer close(gate)
	url := startServe(t, Config{Sampler: slowCollector{s: fixtureSampler(t), gate: gate},
		Interval: time.Hour, NoRuntimeMetrics: true, FirstScrapeWait: 100 * time.Millisecond})
	out := scrapeOnce(t, url)
	if !strings.Contains(out, `torchmem_scrape_success{source="processes"} 0`) {
		t.Errorf("no-sample scrape:\n%s", out)
	}
}
