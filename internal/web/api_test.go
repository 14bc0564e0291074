package web

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/sample/sampletest"
	"github.com/torchmem/torchmem/internal/store"
)

func TestAPINode(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	var n Node
	f.getJSON(t, "/api/v1/node", &n)
	if n.Sample == nil || len(n.Sample.Jobs) != 1 || len(n.Sample.GPU.Devices) != 2 || !n.History {
		t.Fatalf("node = %+v", n)
	}
	if j := n.Sample.Jobs[0]; j.RootPID != sampletest.MainPID || len(j.Processes) != 5 || j.Totals.GPUBytes != 38<<30 {
		t.Errorf("job = %+v", j.Totals)
	}
	if len(n.Runs) != 1 {
		t.Fatalf("live runs = %+v", n.Runs)
	}
	r := n.Runs[0]
	if r.ID != f.running || r.Job != "pid:2000" || *r.Step != 299 || *r.PeakAllocatedBytes != 33<<30 || r.CUDAOOMs != 1 || *r.AllocRetries != 5 {
		t.Errorf("live run = %+v", r)
	}
}

func TestAPIRuns(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	var list struct{ Runs []store.Run }
	f.getJSON(t, "/api/v1/runs", &list)
	if len(list.Runs) != 2 || list.Runs[0].ID != f.running || list.Runs[1].Status != store.StatusOOMKilled {
		t.Fatalf("runs = %+v", list.Runs)
	}
	f.getJSON(t, "/api/v1/runs?status=oom-killed", &list)
	if len(list.Runs) != 1 || list.Runs[0].ID != f.done {
		t.Errorf("filtered runs = %+v", list.Runs)
	}
	var one store.Run
	f.getJSON(t, "/api/v1/runs/"+f.done[:4], &one) // a unique prefix works as in `torchmem show`
	if one.ID != f.done || one.Samples != 60 || len(one.Summary) == 0 {
		t.Errorf("run = %+v", one)
	}
	var evs struct{ Events []store.Event }
	f.getJSON(t, "/api/v1/runs/"+f.running+"/events", &evs)
	if len(evs.Events) != 2 || evs.Events[0].Kind != "cuda_oom" {
		t.Errorf("events = %+v", evs.Events)
	}
}

func TestAPISamplesDownsampled(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	var all, few struct {
		Samples   []store.Sample
		MaxPoints int `json:"max_points"`
	}
	f.getJSON(t, "/api/v1/runs/"+f.running+"/samples?max_points=20000", &all)
	f.getJSON(t, "/api/v1/runs/"+f.running+"/samples?max_points=50", &few)
	if len(all.Samples) != 600 || len(few.Samples) > 50 || len(few.Samples) < 25 || few.Samples[0].Resolution == 0 {
		t.Fatalf("samples: all %d, few %d (res %d ms)", len(all.Samples), len(few.Samples), few.Samples[0].Resolution)
	}
	// Bucket maxima: the peak survives downsampling.
	peak := func(ss []store.Sample) (m int64) {
		for _, s := range ss {
			m = max(m, *s.AllocReserved)
		}
		return m
	}
	if peak(all.Samples) != peak(few.Samples) {
		t.Errorf("peak %d downsampled to %d", peak(all.Samples), peak(few.Samples))
	}
	from := fixtureStart.Add(100 * time.Second).UnixMilli()
	var zoom struct{ Samples []store.Sample }
	f.getJSON(t, "/api/v1/runs/"+f.running+"/samples?from="+itoa64(from)+"&to="+fixtureStart.Add(109*time.Second).Format(time.RFC3339), &zoom)
	if len(zoom.Samples) != 10 {
		t.Errorf("zoomed range: %d samples, want 10", len(zoom.Samples))
	}
}

func itoa64(v int64) string { b, _ := json.Marshal(v); return string(b) }

func TestAPIErrors(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	for path, code := range map[string]int{
		"/api/v1/runs/nosuchrun":                                404,
		"/api/v1/runs/nosuchrun/samples":                        404,
		"/api/v1/runs/" + f.running + "/samples?max_points=0":   400,
		"/api/v1/runs/" + f.running + "/samples?from=yesterday": 400,
		"/api/v1/runs?limit=-1":                                 400,
		"/api/v1/nothing":                                       404,
	} {
		resp := f.get(t, path, "")
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != code {
			t.Errorf("GET %s: %d %s, want %d", path, resp.StatusCode, b, code)
		}
	}
}

func TestAPINoHistory(t *testing.T) {
	srv, err := New(Config{Sampler: emptyNode{}, DBPath: filepath.Join(t.TempDir(), "none.db")})
	if err != nil {
		t.Fatal(err)
	}
	srv.update(context.Background())
	for path, code := range map[string]int{"/api/v1/runs": 503, "/api/v1/runs/abc": 503, "/api/v1/node": 200} {
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != code {
			t.Errorf("GET %s without a store: %d, want %d", path, rec.Code, code)
		}
	}
	var n Node
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/node", nil))
	if err := json.Unmarshal(rec.Body.Bytes(), &n); err != nil || n.History || n.Sample == nil {
		t.Errorf("node without a store: %+v %v", n, err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(srv.cfg.DBPath), "none.db")); err == nil {
		t.Errorf("serve created the store")
	}
}

func TestStream(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	resp := f.get(t, "/api/v1/stream", "")
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	var times []time.Time
	for sc.Scan() && len(times) < 2 {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var n Node
		if err := json.Unmarshal([]byte(line), &n); err != nil || n.Sample == nil {
			t.Fatalf("event %q: %v", line[:min(80, len(line))], err)
		}
		times = append(times, n.Sample.Time)
	}
	if len(times) != 2 || !times[1].After(times[0]) {
		t.Errorf("stream sample times %v: want two successive samples", times)
	}
}

func TestMetricsEndpoint(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	resp := f.get(t, "/metrics", "")
	b, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		`torchmem_job_allocator_reserved_bytes{job_id="pid:2000@79998",run="` + f.running + `"}`,
		`torchmem_job_info{command="/usr/bin/python3 train_dataloader.py 4 100",job_id="pid:2000@79998",run="` + f.running + `"} 1`,
		`torchmem_gpu_memory_used_bytes{UUID="GPU-0",gpu="0"} 4.294967296e+10`,
		`torchmem_scrape_success{source="store"} 1`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func TestPagesAndAssets(t *testing.T) {
	f := newFixture(t, fixtureOpts{})
	for path, want := range map[string]string{
		"/": `data-page="node"`, "/runs": `data-page="runs"`, "/runs/" + f.running: `data-page="run"`,
		"/static/app.js": "fmtBytes", "/static/uPlot.iife.min.js": "uPlot", "/static/uPlot.min.css": ".uplot",
		"/runs/" + f.done + "/report.html": f.done,
	} {
		resp := f.get(t, path, "")
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || !strings.Contains(string(b), want) {
			t.Errorf("GET %s: %d, lacks %q", path, resp.StatusCode, want)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("GET %s: security headers missing", path)
		}
	}
	if resp := f.get(t, "/static/nope.js", ""); resp.StatusCode != 404 {
		t.Errorf("missing asset: %d", resp.StatusCode)
	}
}

// FuzzQueryParams: query parameters are untrusted input; they give a
// value or a 400, never a panic.
func FuzzQueryParams(f *testing.F) {
	for _, s := range []string{"", "2000", "-1", "1e9", "2026-11-29T12:00:00Z", "1795953600000", "yesterday", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if _, err := intParam(v, 1, 10, 20000, "max_points"); err != nil && !strings.Contains(err.Error(), "max_points") {
			t.Errorf("error %v does not name the parameter", err)
		}
		_, _ = timeParam(v, "from")
	})
}
