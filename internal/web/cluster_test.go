package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/torchmem/torchmem/internal/cluster"
)

// recordedCluster is a summary internal/cluster made of a real
// Prometheus's answers (its testdata/down.golden.json): node-a up with a
// PyTorch job, node-b's agent just stopped after two OOM kills.
func recordedCluster(t testing.TB) *cluster.Summary {
	t.Helper()
	b, err := os.ReadFile("testdata/cluster.json")
	if err != nil {
		t.Fatal(err)
	}
	var s cluster.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

// fakeCluster answers with sum (or err) and counts the questions.
type fakeCluster struct {
	sum   *cluster.Summary
	err   error
	calls atomic.Int32
}

func (f *fakeCluster) Fetch(context.Context) (*cluster.Summary, error) {
	f.calls.Add(1)
	return f.sum, f.err
}

func TestAPICluster(t *testing.T) {
	src := &fakeCluster{sum: recordedCluster(t)}
	f := newFixture(t, fixtureOpts{samples: 5, cluster: src})
	var got cluster.Summary
	f.getJSON(t, "/api/v1/cluster", &got)
	if len(got.Nodes) != 2 || got.Nodes[1].Name != "node-b" || got.Nodes[1].Up {
		t.Errorf("cluster: %+v", got.Nodes)
	}
	// Pages opened together share one answer.
	for i := 0; i < 3; i++ {
		f.getJSON(t, "/api/v1/cluster", &got)
	}
	if n := src.calls.Load(); n != 1 {
		t.Errorf("4 requests within %s asked Prometheus %d times", clusterReuse, n)
	}

	bad := newFixture(t, fixtureOpts{samples: 5, cluster: &fakeCluster{err: errors.New("Prometheus at http://p:9090 did not answer within 10s")}})
	resp := bad.get(t, "/api/v1/cluster", "")
	var e struct{ Error string }
	_ = json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || e.Error != "Prometheus at http://p:9090 did not answer within 10s" {
		t.Errorf("Prometheus down: %d %q", resp.StatusCode, e.Error)
	}

	none := newFixture(t, fixtureOpts{samples: 5})
	resp = none.get(t, "/api/v1/cluster", "")
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("without --prometheus: %d", resp.StatusCode)
	}
}

// TestClusterPageInBrowser opens /cluster in a real browser and checks
// that it shows each node's state and the API's numbers.
func TestClusterPageInBrowser(t *testing.T) {
	ctx := browser(t)
	sum := recordedCluster(t)
	f := newFixture(t, fixtureOpts{samples: 5, cluster: &fakeCluster{sum: sum}})
	if err := chromedp.Do(ctx, chromedp.Navigate(f.url+"/cluster")); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("nodes").dataset.loaded === "1"`)); err != nil {
		t.Fatalf("cluster page never loaded: %v", err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]shown](collectShown))
	if err != nil {
		t.Fatal(err)
	}
	states, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]string](
		`Object.fromEntries([...document.querySelectorAll('tr[data-node]')].map(r => [r.dataset.node, r.children[1].textContent]))`))
	if err != nil {
		t.Fatal(err)
	}
	a, b := sum.Nodes[0], sum.Nodes[1]
	if states["node-a"] != "up" || len(states["node-b"]) < len("down, last seen") || states["node-b"][:len("down, last seen")] != "down, last seen" {
		t.Errorf("states shown: %q", states)
	}
	expect(t, "cluster", got, "node.node-a.mem_available", int64(*a.MemAvailableBytes))
	expect(t, "cluster", got, "gpu.node-a.0.used", int64(*a.GPUs[0].UsedBytes))
	j := a.Jobs[0]
	expect(t, "cluster", got, "job.node-a."+j.ID+".rss", int64(*j.RSSBytes))
	expect(t, "cluster", got, "job.node-a."+j.ID+".pss", int64(*j.PSSBytes))
	if s := got["node.node-b.ooms"]; s.Text != strconv.Itoa(b.OOMs.Total()) {
		t.Errorf("node-b OOMs shown %q, summary %d", s.Text, b.OOMs.Total())
	}
	for k := range got {
		if strings.HasPrefix(k, "job.node-b.") {
			t.Errorf("a down node's job is shown: %s", k)
		}
	}
	screenshot(t, ctx, "cluster.png")
}
