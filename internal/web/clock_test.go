package web

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/sample"
)

// Tests of the server's time: the assets' modification time from
// Config.Now, sampling and keep-alives paced by ticks the test sends. None
// sleeps; each runs in milliseconds.

// countingCollector returns an empty sample stamped by now and signals
// each call on calls.
type countingCollector struct {
	now   func() time.Time
	calls chan struct{}
}

func (c *countingCollector) Collect(context.Context) (*sample.Sample, error) {
	c.calls <- struct{}{}
	return &sample.Sample{Schema: sample.SchemaVersion, Time: c.now(), Jobs: []sample.Job{}}, nil
}

// fakeTickers hands out one tick channel per period asked for.
type fakeTickers struct {
	mu    sync.Mutex
	ticks map[time.Duration]chan time.Time
	asked chan time.Duration
}

func newFakeTickers() *fakeTickers {
	return &fakeTickers{ticks: map[time.Duration]chan time.Time{}, asked: make(chan time.Duration, 16)}
}

func (f *fakeTickers) ticker(d time.Duration) (<-chan time.Time, func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.ticks[d]
	if !ok {
		c = make(chan time.Time)
		f.ticks[d] = c
	}
	f.asked <- d
	return c, func() {}
}

func (f *fakeTickers) tick(d time.Duration, at time.Time) {
	f.mu.Lock()
	c := f.ticks[d]
	f.mu.Unlock()
	c <- at
}

var clockT0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

func newClockServer(t *testing.T, interval time.Duration) (*Server, *countingCollector, *fakeTickers) {
	t.Helper()
	now := func() time.Time { return clockT0 }
	c := &countingCollector{now: now, calls: make(chan struct{}, 16)}
	s, err := New(Config{Sampler: c, Interval: interval, Now: now, NoRuntimeMetrics: true, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	ft := newFakeTickers()
	s.ticker = ft.ticker
	return s, c, ft
}

// The dashboard's assets are last modified when the server started, by
// its clock: a browser revalidates and gets 304 until the next start.
func TestAssetsModifiedAtStartByClock(t *testing.T) {
	s, _, _ := newClockServer(t, time.Second)
	h := s.Handler()
	for _, path := range []string{"/", "/static/node.js", "/static/uPlot.min.css"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if got := rec.Header().Get("Last-Modified"); got != clockT0.Format(http.TimeFormat) {
			t.Errorf("%s: Last-Modified %q, want %q", path, got, clockT0.Format(http.TimeFormat))
		}
		for _, c := range []struct {
			since time.Time
			want  int
		}{{clockT0, http.StatusNotModified}, {clockT0.Add(-time.Second), http.StatusOK}} {
			req := httptest.NewRequest("GET", path, nil)
			req.Header.Set("If-Modified-Since", c.since.Format(http.TimeFormat))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != c.want {
				t.Errorf("%s since %s: %d, want %d", path, c.since, rec.Code, c.want)
			}
		}
	}
}

// Run samples at once, then once per tick of Interval, and stops (closing
// the store) when its context ends.
func TestRunSamplesOnEachTick(t *testing.T) {
	s, c, ft := newClockServer(t, 7*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	if d := <-ft.asked; d != 7*time.Second {
		t.Fatalf("ticker every %s, want 7s", d)
	}
	<-c.calls // the first sample, without waiting for a tick
	for i := 1; i <= 3; i++ {
		ft.tick(7*time.Second, clockT0.Add(time.Duration(i)*7*time.Second))
		<-c.calls
	}
	select {
	case <-c.calls:
		t.Fatal("sampled without a tick")
	default:
	}
	cancel()
	<-done
	if b, _ := s.nodeBytes(); !strings.Contains(string(b), `"interval_seconds":7`) {
		t.Errorf("node %s", b)
	}
}

// An idle live stream sends a comment at each keep-alive tick and an event
// at each sample, with the retry delay of two intervals first.
func TestStreamKeepAliveAndEvents(t *testing.T) {
	s, c, ft := newClockServer(t, 3*time.Second)
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/api/v1/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	next := func() string {
		t.Helper()
		var b strings.Builder
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("stream: %v after %q", err, b.String())
			}
			if line == "\n" {
				return b.String()
			}
			b.WriteString(line)
		}
	}
	if got := next(); got != "retry: 6000\n" {
		t.Fatalf("first block %q", got)
	}
	if d := <-ft.asked; d != keepAliveEvery {
		t.Fatalf("keep-alive every %s, want %s", d, keepAliveEvery)
	}
	ft.tick(keepAliveEvery, clockT0.Add(keepAliveEvery))
	if got := next(); got != ": keep-alive\n" {
		t.Errorf("on a keep-alive tick: %q", got)
	}
	s.update(context.Background())
	<-c.calls
	if got := next(); !strings.HasPrefix(got, "event: node\ndata: {") || !strings.Contains(got, `"time":"2024-05-01T12:00:00Z"`) {
		t.Errorf("after a sample: %q", got)
	}
}
