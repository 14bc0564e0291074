package supervisor

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/policy"
	"github.com/torchmem/torchmem/internal/store"
)

// waitDone drains the supervisor's finished actions until n "_done" events
// are recorded (real time: the actions run on goroutines).
func waitDone(t *testing.T, s *sup, rec *recorder, n int) []store.Event {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.drainActions()
		var done []store.Event
		for _, e := range rec.events {
			if strings.HasSuffix(e.Kind, "_done") {
				done = append(done, e)
			}
		}
		if len(done) >= n || time.Now().After(deadline) {
			return done
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// exec and notify run once per rate limit while the condition holds: the
// command gets the run id, rule, metric and value in its environment, the
// HTTP listener on 127.0.0.1 and the FIFO get one JSON object each time,
// and the results are recorded as events.
func TestExecAndNotifyOncePerRateLimit(t *testing.T) {
	var mu sync.Mutex
	var posts []notifyBody
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b notifyBody
		_ = json.NewDecoder(r.Body).Decode(&b)
		mu.Lock()
		posts = append(posts, b)
		mu.Unlock()
	}))
	defer srv.Close()
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Fatalf("server at %s", srv.URL)
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "events.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenFile(fifo, os.O_RDWR, 0) // a reader that never blocks the open
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := filepath.Join(dir, "exec.out")
	mk := func(name, action, target string) policy.Rule {
		return policy.Rule{Name: name, Metric: policy.CgroupTimeToOOM, Threshold: 30, Action: action, Target: target, Every: 10 * time.Second}
	}
	c := &fakeClock{}
	s, rec, notices := newClockSup(c,
		mk("page", policy.Exec, `echo "$TORCHMEM_RUN_ID $TORCHMEM_RULE $TORCHMEM_METRIC $TORCHMEM_VALUE" >> `+out+`; echo said it`),
		mk("hook", policy.Notify, srv.URL+"/alert"),
		mk("pipe", policy.Notify, "fifo:"+fifo))
	s.cfg.RunID = "abc123"
	for i, fires := range []bool{true, false, false, true} { // at 0, 4, 8, 12 s; every 10 s
		c.set(time.Duration(i*4) * time.Second)
		before := len(rec.events)
		s.applyPolicy(c.now(), map[string]float64{policy.CgroupTimeToOOM: 12.5})
		if fired := len(rec.events) > before; fired != fires {
			t.Fatalf("at %ds: fired %v, want %v", i*4, fired, fires)
		}
		if fires {
			waitDone(t, s, rec, 3*(i/3+1))
		}
	}
	done := waitDone(t, s, rec, 6)
	if len(done) != 6 {
		t.Fatalf("%d results: %+v\n%s", len(done), done, notices)
	}
	b, _ := os.ReadFile(out)
	if string(b) != strings.Repeat("abc123 page cgroup.time_to_oom 12.5\n", 2) {
		t.Errorf("exec saw %q", b)
	}
	for _, e := range done {
		if e.Kind == "exec_done" && (!strings.Contains(e.Message, "page: exited 0") || !strings.Contains(string(e.Data), `"output":"said it"`)) {
			t.Errorf("exec event %s %s", e.Message, e.Data)
		}
		if e.Kind == "notify_done" && !strings.Contains(e.Message, "delivered") {
			t.Errorf("notify event %s", e.Message)
		}
	}
	mu.Lock()
	if len(posts) != 2 || posts[0] != (notifyBody{RunID: "abc123", Rule: "hook", Metric: policy.CgroupTimeToOOM, Value: 12.5, Threshold: 30, Time: "2024-05-01T12:00:00Z"}) {
		t.Errorf("posts %+v", posts)
	}
	mu.Unlock()
	br := bufio.NewReader(r)
	for i := 0; i < 2; i++ {
		line, err := br.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, `{"run_id":"abc123","rule":"pipe","metric":"cgroup.time_to_oom","value":12.5,`) {
			t.Errorf("fifo line %d: %q %v", i, line, err)
		}
	}
}

// A notify that cannot be delivered (nobody listening, no reader on the
// FIFO, a path that is not a FIFO) and a command that fails or hangs are
// reported, bounded in time, and never block applyPolicy.
func TestExternalActionFailures(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "nobody.fifo")
	_ = syscall.Mkfifo(fifo, 0o600)
	plain := filepath.Join(dir, "plain")
	_ = os.WriteFile(plain, nil, 0o600)
	ln := httptest.NewServer(http.NotFoundHandler())
	closed := ln.URL
	ln.Close()
	for _, c := range []struct {
		action, target, want string
	}{
		{policy.Notify, "fifo:" + fifo, "failed: nobody is reading"},
		{policy.Notify, "fifo:" + plain, "is not a FIFO"},
		{policy.Notify, closed, "failed:"},
		{policy.Notify, "unix:" + filepath.Join(dir, "no.sock"), "failed:"},
		{policy.Exec, "echo oops >&2; exit 3", "exited 3"},
	} {
		clk := &fakeClock{}
		s, rec, notices := newClockSup(clk, policy.Rule{Name: "r", Metric: policy.PSISomeAvg10, Above: true,
			Threshold: 10, Action: c.action, Target: c.target, Every: time.Minute})
		start := time.Now()
		s.applyPolicy(clk.now(), map[string]float64{policy.PSISomeAvg10: 50})
		if d := time.Since(start); d > 100*time.Millisecond {
			t.Errorf("%s: applyPolicy took %s", c.target, d)
		}
		done := waitDone(t, s, rec, 1)
		if len(done) != 1 || !strings.Contains(done[0].Message, c.want) || !strings.Contains(notices.String(), c.want) {
			t.Errorf("%s %s: results %+v, notices %q, want %q", c.action, c.target, done, notices, c.want)
		}
	}
}

// An exec command past ExecTimeout is killed with its process group; the
// next firing of the same rule is skipped while one still runs.
func TestExecOneAtATime(t *testing.T) {
	clk := &fakeClock{}
	s, rec, _ := newClockSup(clk, policy.Rule{Name: "slow", Metric: policy.PSISomeAvg10, Above: true,
		Threshold: 10, Action: policy.Exec, Target: "sleep 1", Every: time.Second})
	s.applyPolicy(clk.now(), map[string]float64{policy.PSISomeAvg10: 50})
	clk.advance(2 * time.Second)
	s.applyPolicy(clk.now(), map[string]float64{policy.PSISomeAvg10: 50})
	if len(rec.events) != 1 || s.pst.Last[0] != clockT0 {
		t.Errorf("second exec while the first runs: events %+v", rec.events)
	}
	if done := waitDone(t, s, rec, 1); len(done) != 1 || !strings.Contains(done[0].Message, "exited 0") {
		t.Errorf("results %+v", done)
	}
	msg, _ := runExecFor("sleep 5", nil, 100*time.Millisecond)
	if msg != "killed after 100ms" {
		t.Errorf("timeout: %q", msg)
	}
}
