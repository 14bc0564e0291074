package web

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/torchmem/torchmem/internal/sample"
	"github.com/torchmem/torchmem/internal/store"
)

// emptyNode is a Collector of an idle node, for benchmarks of the history side.
type emptyNode struct{}

func (emptyNode) Collect(context.Context) (*sample.Sample, error) {
	return &sample.Sample{Schema: sample.SchemaVersion, Time: time.Now(), Jobs: []sample.Job{}}, nil
}

// write24h records a finished 24-hour run sampled at 10 Hz with 8 GPUs, with
// the store's default downsampling tiers (as a real run under the
// supervisor) unless raw, and returns its id.
func write24h(t testing.TB, path string, raw bool) string {
	t0 := time.Now().Add(-25 * time.Hour).Truncate(time.Hour)
	now := t0
	opts := store.Options{Now: func() time.Time { return now }, FlushInterval: time.Hour}
	if raw {
		opts.Tiers = []store.Tier{}
	}
	db, err := store.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	run := &store.Run{Command: []string{"torchrun", "--nproc-per-node", "8", "train.py"}, Start: t0}
	if err := db.CreateRun(run); err != nil {
		t.Fatal(err)
	}
	const n = 24 * 3600 * 10
	for i := 0; i < n; i++ {
		now = t0.Add(time.Duration(i) * 100 * time.Millisecond)
		w := int64(i % 6000)
		gpus := make([]*int64, 8)
		for g := range gpus {
			gpus[g] = p64(60<<30 + w<<20 + int64(g)<<28)
		}
		s := store.Sample{Time: now, CgroupUsage: p64(80<<30 + w<<16), HostAvailable: p64(1 << 40), RSSTotal: p64(90 << 30), PSSTotal: p64(70 << 30),
			AllocAllocated: p64(50<<30 + w<<20), AllocReserved: p64(58<<30 + w<<20), Step: p64(int64(i / 20)), GPUUsed: gpus, GPUJobUsed: gpus}
		if err := db.AppendSample(run.ID, s); err != nil {
			t.Fatal(err)
		}
		if i%36000 == 0 { // each simulated hour, as the flusher would
			if err := db.Compact(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := db.Compact(); err != nil {
		t.Fatal(err)
	}
	code := 0
	if err := db.FinishRun(run.ID, store.Finish{End: now, Status: store.StatusExited, ExitCode: &code}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return run.ID
}

// TestRunPage24h10Hz measures how long the run page of a 24-hour 10 Hz run
// takes to open in a real browser, and the samples API call behind it. It
// writes 864,000 samples first (about a minute), so it runs only with
// TORCHMEM_BENCH_24H=tiered (default store tiers) or =raw (every sample
// kept); bench/serve-page.sh runs both. It logs, never asserts, times.
func TestRunPage24h10Hz(t *testing.T) {
	mode := os.Getenv("TORCHMEM_BENCH_24H")
	if mode != "tiered" && mode != "raw" {
		t.Skip("set TORCHMEM_BENCH_24H=tiered or raw (bench/serve-page.sh)")
	}
	path := filepath.Join(t.TempDir(), "torchmem.db")
	start := time.Now()
	id := write24h(t, path, mode == "raw")
	fi, _ := os.Stat(path)
	t.Logf("wrote 24 h at 10 Hz (%s) in %s: %d bytes", mode, time.Since(start).Round(time.Second), fi.Size())
	srv, err := New(Config{Sampler: emptyNode{}, DBPath: path, Version: "bench", NoRuntimeMetrics: true})
	if err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.Run(ctx)
	go srv.Serve(ctx, ln)
	f := &fixture{srv: srv, url: "http://" + ln.Addr().String()}
	var run store.Run
	f.getJSON(t, "/api/v1/runs/"+id, &run)
	for _, mp := range []int{1366, 2000, 4000} {
		t0 := time.Now()
		var b struct{ Samples []store.Sample }
		f.getJSON(t, "/api/v1/runs/"+id+"/samples?max_points="+strconv.Itoa(mp), &b)
		t.Logf("stored rows %d; GET samples?max_points=%d: %d points in %s", run.Samples, mp, len(b.Samples), time.Since(t0).Round(time.Millisecond))
	}
	bctx := browser(t)
	var times []string
	for i := 0; i < 3; i++ { // first: cold browser cache
		if err := chromedp.Do(bctx, chromedp.Navigate(f.url+"/runs/"+id)); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(bctx, chromedp.Poll[bool](`document.body.dataset.ready === "1"`)); err != nil {
			t.Fatal(err)
		}
		ms, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.body.dataset.readyMs + " ms, " + document.body.dataset.points + " points"`))
		if err != nil {
			t.Fatal(err)
		}
		times = append(times, ms)
	}
	t.Logf("run page open to charts drawn (navigation start to ready): %v", times)
	screenshot(t, bctx, fmt.Sprintf("run-24h-%s.png", mode))
}
