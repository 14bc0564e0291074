package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/oomexplain"
)

// fakeKernelLog feeds a captured kernel log through the same parser and
// explainer as the live follower, then waits for the end.
func fakeKernelLog(t *testing.T, name string, times int) OOMSource {
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return func(ctx context.Context, emit func(oomexplain.Incident)) error {
		for i := 0; i < times; i++ {
			incs, err := oomexplain.Parse(strings.NewReader(string(b)), oomexplain.Options{Source: "kmsg"})
			if err != nil {
				return err
			}
			oomexplain.ExplainAll(incs, oomexplain.Context{SameHost: true})
			for _, inc := range incs {
				emit(inc)
			}
		}
		<-ctx.Done()
		return nil
	}
}

// TestServeOOMIncidents: serve's kernel-log incidents carry the same
// verdicts as `torchmem oom`, are counted by kind and verdict on
// /metrics, and the list stays bounded however many come.
func TestServeOOMIncidents(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := New(Config{Sampler: emptyNode{}, KernelOOM: fakeKernelLog(t, "testdata/kernel-memcg-oom.dmesg", oomKeep+5)})
	if err != nil {
		t.Fatal(err)
	}
	go srv.watchOOM(ctx)
	for i := 0; i < 500; i++ {
		srv.oom.mu.Lock()
		n := len(srv.oom.recent) + srv.oom.dropped
		srv.oom.mu.Unlock()
		if n == oomKeep+5 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	srv.update(ctx)
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/oom", nil))
	var rep oomReport
	if err := json.Unmarshal(rec.Body.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Watched || len(rep.Incidents) != oomKeep || rep.Dropped != 5 {
		t.Fatalf("watched %v, %d incidents, %d dropped", rep.Watched, len(rep.Incidents), rep.Dropped)
	}
	if e := rep.Incidents[0].Explanation; e == nil || e.Verdict != oomexplain.VerdictCgroupLimit {
		t.Errorf("explanation %+v", e)
	}
	rec = httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	want := fmt.Sprintf(`torchmem_oom_incidents_total{kind="kernel_oom_kill",verdict="cgroup_limit"} %d`, oomKeep+5)
	if !strings.Contains(rec.Body.String(), want) || !strings.Contains(rec.Body.String(), `torchmem_scrape_success{source="kernel_log"} 1`) {
		t.Errorf("metrics lack %q:\n%s", want, grepLines(rec.Body.String(), "oom"))
	}
}

// TestServeOOMSourceFails: a kernel log that cannot be read is a failed
// source on /metrics and an error in the API, never a failed agent.
func TestServeOOMSourceFails(t *testing.T) {
	srv, err := New(Config{Sampler: emptyNode{}, KernelOOM: func(context.Context, func(oomexplain.Incident)) error {
		return fmt.Errorf("open /dev/kmsg: operation not permitted")
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv.watchOOM(context.Background())
	srv.update(context.Background())
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if !strings.Contains(rec.Body.String(), `torchmem_scrape_success{source="kernel_log"} 0`) {
		t.Errorf("metrics:\n%s", grepLines(rec.Body.String(), "scrape_success"))
	}
	rec = httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/oom", nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "operation not permitted") {
		t.Errorf("api: %d %s", rec.Code, rec.Body.String())
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
