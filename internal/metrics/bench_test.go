package metrics

import (
	"context"
	"io"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// BenchmarkScrape8GPU200Proc is one /metrics scrape (gather + text
// encoding) of a node with 8 GPUs and a 200-process job (fixture tree of
// real captured files, fake GPU backend): the cost Prometheus adds.
func BenchmarkScrape8GPU200Proc(b *testing.B) {
	benchScrape(b, Options{NoRuntime: true})
}

// BenchmarkScrape8GPU200ProcPerProcess is the same scrape with the
// per-process series on (serve --process-metrics): what every scrape
// cost before they became opt-in.
func BenchmarkScrape8GPU200ProcPerProcess(b *testing.B) {
	benchScrape(b, Options{NoRuntime: true, ProcessSeries: true})
}

func benchScrape(b *testing.B, o Options) {
	st := fixtureState(b, 199, 8)
	reg := NewRegistry(func() *State { return st }, o)
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	req := httptest.NewRequest("GET", "/metrics", nil)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
		io.Discard.Write(rec.Body.Bytes())
	}
}

// BenchmarkSampleAndScrape8GPU200Proc adds the fast-tier sample the serve
// loop takes every --interval, to compare with a collect-at-scrape design.
func BenchmarkSampleAndScrape8GPU200Proc(b *testing.B) {
	st := fixtureState(b, 199, 8)
	s := fixtureSampler(b, 199, 8)
	if _, err := s.Collect(context.Background()); err != nil { // warm: PSS tier, command lines
		b.Fatal(err)
	}
	reg := NewRegistry(func() *State { return st }, Options{NoRuntime: true})
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	req := httptest.NewRequest("GET", "/metrics", nil)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		smp, err := s.Collect(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		st.Sample = smp
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
	}
}
