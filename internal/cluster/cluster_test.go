package cluster

import (
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden summaries")

// replay serves the answers recorded in testdata/<state> as a Prometheus
// would, and fails a request without the bearer token.
func replay(t *testing.T, state, token string) (*httptest.Server, time.Time) {
	t.Helper()
	byQuery := map[string]string{}
	for name, q := range Queries(DefaultWindow) {
		byQuery[q] = filepath.Join("testdata", state, name+".json")
	}
	b, err := os.ReadFile(filepath.Join("testdata", state, "time"))
	if err != nil {
		t.Fatal(err)
	}
	sec, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		_ = r.ParseForm()
		file, ok := byQuery[r.Form.Get("query")]
		if r.URL.Path != "/api/v1/query" || !ok || r.Form.Get("time") != strconv.FormatInt(sec, 10) {
			t.Errorf("unexpected request %s %v", r.URL.Path, r.Form)
			http.Error(w, `{"status":"error","errorType":"bad_data","error":"unexpected"}`, http.StatusBadRequest)
			return
		}
		http.ServeFile(w, r, file)
	}))
	t.Cleanup(srv.Close)
	return srv, time.Unix(sec, 0)
}

func fetchRecorded(t *testing.T, state string) *Summary {
	t.Helper()
	srv, at := replay(t, state, "tok-123")
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("tok-123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{URL: srv.URL, TokenFile: tok, Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := c.Fetch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sum.Prometheus = "http://prometheus.test:9090" // the replay server's port changes each run
	golden(t, state+".golden.json", sum)
	return sum
}

func golden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if strings.TrimSpace(string(want)) != string(got) {
		t.Errorf("%s differs (-update to accept):\n%s", name, got)
	}
}

func node(s *Summary, name string) *Node {
	for i := range s.Nodes {
		if s.Nodes[i].Name == name {
			return &s.Nodes[i]
		}
	}
	return nil
}

func jobWith(n *Node, command string) *Job {
	for i := range n.Jobs {
		if strings.Contains(n.Jobs[i].Command, command) {
			return &n.Jobs[i]
		}
	}
	return nil
}

func TestFetchRecordedUp(t *testing.T) {
	s := fetchRecorded(t, "up")
	a, b := node(s, "node-a"), node(s, "node-b")
	if a == nil || b == nil || len(s.Nodes) != 2 {
		t.Fatalf("nodes: %+v", s.Nodes)
	}
	if !a.Up || !b.Up || a.LastSeen == nil || b.Version == "" {
		t.Errorf("liveness: a %+v b %+v", a, b)
	}
	// node-a is a real host: the test's torch process and whatever else
	// ran torch there at the time.
	if j := jobWith(a, "torchmem-cluster-test"); j == nil || !strings.HasPrefix(j.ID, "pid:") || j.RSSBytes == nil || *j.RSSBytes < 50<<20 {
		t.Errorf("node-a jobs: %+v", a.Jobs)
	}
	if len(b.Jobs) != 1 || !strings.HasPrefix(b.Jobs[0].ID, "pid:2000@") || b.Jobs[0].OOMKills != 1 || b.Jobs[0].Processes == nil || *b.Jobs[0].Processes != 3 {
		t.Errorf("node-b jobs: %+v", b.Jobs)
	}
	if len(b.GPUs) != 2 || b.GPUs[1].UUID != "GPU-b1" || b.GPUs[1].UsedBytes == nil || *b.GPUs[1].UsedBytes != 2<<32 {
		t.Errorf("node-b GPUs: %+v", b.GPUs)
	}
	if b.OOMs.HostKills != 2 || b.OOMs.JobKills[b.Jobs[0].ID] != 1 || b.OOMs.Total() != 2 || a.OOMs.Total() != 0 {
		t.Errorf("OOMs: a %+v b %+v", a.OOMs, b.OOMs)
	}
}

func TestFetchRecordedDown(t *testing.T) {
	s := fetchRecorded(t, "down")
	b := node(s, "node-b")
	if b == nil || b.Up || b.LastSeen == nil || len(b.Jobs) != 0 || len(b.GPUs) != 0 {
		t.Fatalf("node-b: %+v", b)
	}
	if age := s.Time.Sub(*b.LastSeen); age < 0 || age > 5*time.Second {
		t.Errorf("node-b last seen %s before the query", age)
	}
	if b.OOMs.HostKills != 2 {
		t.Errorf("a down node keeps its window's OOMs: %+v", b.OOMs)
	}
	if a := node(s, "node-a"); a == nil || !a.Up || jobWith(a, "torchmem-cluster-test") == nil {
		t.Errorf("node-a: %+v", a)
	}
}

func TestFetchErrors(t *testing.T) {
	srv, _ := replay(t, "up", "right")
	c, err := New(Options{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Fetch(context.Background())
	if err == nil || err.Error() != "Prometheus at "+srv.URL+": HTTP 401: wrong or missing credentials (--prometheus-token-file, --http.config.file)" {
		t.Errorf("no token: %v", err)
	}

	// Prometheus's answer to a query it rejects names the query.
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"status":"error","errorType":"bad_data","error":"1:1: parse error: unexpected character"}`))
	}))
	defer bad.Close()
	c, _ = New(Options{URL: bad.URL})
	if _, err = c.Fetch(context.Background()); err == nil || !strings.Contains(err.Error(), ": query ") || !strings.Contains(err.Error(), "bad_data: 1:1: parse error") {
		t.Errorf("rejected query: %v", err)
	}

	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
	}))
	defer slow.Close()
	c, _ = New(Options{URL: slow.URL, Timeout: 100 * time.Millisecond})
	if _, err = c.Fetch(context.Background()); err == nil || err.Error() != "Prometheus at "+slow.URL+" did not answer within 100ms" {
		t.Errorf("timeout: %v", err)
	}

	for _, o := range []Options{{URL: "localhost:9090"}, {URL: "ftp://x"}, {URL: "http://"},
		{URL: "http://x", TokenFile: filepath.Join(t.TempDir(), "none")}, {URL: "http://x", HTTPConfigFile: filepath.Join(t.TempDir(), "none.yml")}, {URL: "http://x", Window: time.Minute}} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v): no error", o)
		}
	}
}
