package metrics

import (
	"bytes"
	"errors"
	"flag"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/torchmem/torchmem/internal/store"
)

var update = flag.Bool("update", false, "rewrite golden files")

// scrape returns the exposition text of reg as Prometheus would fetch it.
func scrape(t testing.TB, st *State, o Options) string {
	t.Helper()
	o.NoRuntime = true
	reg := NewRegistry(func() *State { return st }, o)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.Header.Set("Accept", "text/plain")
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}).ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("scrape: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (-update to accept):\n%s", name, got)
	}
}

func TestExpositionGolden(t *testing.T) {
	st := fixtureState(t, 4, 2)
	golden(t, "fixture.prom", scrape(t, st, Options{Version: "v0.0.0-test"}))
}

// TestPromtoolCheckMetrics lints the real output with Prometheus's own
// linter (names, units, suffixes, help texts).
func TestPromtoolCheckMetrics(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (Debian package prometheus)")
	}
	st := fixtureState(t, 4, 2)
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(scrape(t, st, Options{Version: "test"}))
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestFailingSourceKeepsOthers: a GPU backend error and an unreadable
// store each show as success 0 while the host and jobs are still there.
func TestFailingSourceKeepsOthers(t *testing.T) {
	st := fixtureState(t, 1, 1)
	st.Sample.GPU.Error = "nvml: GPU is lost"
	st.RunsErr = errors.New("database is locked")
	out := scrape(t, st, Options{})
	for _, want := range []string{
		`torchmem_scrape_success{source="gpu"} 0`, `torchmem_scrape_success{source="store"} 0`,
		`torchmem_scrape_success{source="host"} 1`, `torchmem_scrape_success{source="processes"} 1`,
		"torchmem_host_memory_available_bytes ", `torchmem_job_processes{job_id="pid:2000@79998"} 2`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q", want)
		}
	}
	if strings.Contains(out, "torchmem_gpu_memory_used_bytes") || strings.Contains(out, "torchmem_job_allocator_allocated_bytes") {
		t.Errorf("failed sources still exported series:\n%s", out)
	}
}

// TestNoSample: before the first sample, every sampled source says 0 and
// the scrape still succeeds; without a store there is no store source.
func TestNoSample(t *testing.T) {
	out := scrape(t, &State{SampleErr: errors.New("read /proc/meminfo: permission denied")}, Options{})
	for _, s := range []string{"host", "gpu", "processes", "cgroup"} {
		if !strings.Contains(out, `torchmem_scrape_success{source="`+s+`"} 0`) {
			t.Errorf("source %s not 0:\n%s", s, out)
		}
	}
	if strings.Contains(out, `source="store"`) {
		t.Errorf("store source without a store")
	}
}

// TestProcessBound: with more processes than the bound, the biggest are
// kept and the rest counted.
func TestProcessBound(t *testing.T) {
	st := fixtureState(t, 9, 2) // 10 processes; the main holds GPU memory
	out := scrape(t, st, Options{MaxProcesses: 3, ProcessSeries: true})
	if n := strings.Count(out, "torchmem_process_rss_bytes{"); n != 3 {
		t.Errorf("rss series = %d, want 3", n)
	}
	if !strings.Contains(out, "torchmem_process_series_dropped 7") {
		t.Errorf("dropped count missing")
	}
	if !strings.Contains(out, `torchmem_process_gpu_memory_bytes{job_id="pid:2000@79998",pid="2000",role="main"}`) {
		t.Errorf("the main process (biggest GPU user) was dropped")
	}
}

func TestNames(t *testing.T) {
	names := Names()
	out := scrape(t, fixtureState(t, 1, 1), Options{})
	for _, n := range []string{"torchmem_gpu_memory_used_bytes", "torchmem_job_cgroup_memory_limit_bytes", "torchmem_scrape_success", "torchmem_build_info"} {
		if !slices.Contains(names, n) {
			t.Errorf("Names lacks %s", n)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if name, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, _, _ = strings.Cut(name, " ")
			if !slices.Contains(names, name) {
				t.Errorf("exported %s is not in Names", name)
			}
		}
	}
}

// TestBadLabelValues: a command line that is not UTF-8 (any byte string
// is a valid argv) is repaired, not a panic or a failed scrape.
func TestBadLabelValues(t *testing.T) {
	st := fixtureState(t, 1, 1)
	st.Sample.Jobs[0].Command = "python3 \xff\xfe train.py"
	st.Sample.GPU.Devices[0].Name = "NVIDIA \xc3"
	out := scrape(t, st, Options{})
	if !strings.Contains(out, `command="python3 \ufffd train.py"`) && !strings.Contains(out, "python3 \uFFFD train.py") {
		t.Errorf("command label not repaired:\n%s", out)
	}
	if !strings.Contains(out, `torchmem_scrape_success{source="processes"} 1`) {
		t.Errorf("processes source failed")
	}
}

// TestMatchRunsThroughAncestors: a job whose root is not the supervisor's
// child (a shell or torchrun in between, or workers grouped apart from
// their main) is still tied to its run.
func TestMatchRunsThroughAncestors(t *testing.T) {
	st := fixtureState(t, 1, 1) // job root 2000, its PPid 1
	runs := []RunState{{Run: store.Run{ID: "direct", SupervisorPID: 1}}, {Run: store.Run{ID: "other", SupervisorPID: 77}}}
	MatchRuns(st.Sample, runs, nil)
	if runs[0].Job != "pid:2000" || runs[1].Job != "" {
		t.Fatalf("direct child: %+v", runs)
	}
	st.Sample.Jobs[0].Processes[0].PPid = 500 // 2000 -> 500 (bash) -> 400 -> 77 (supervisor)
	parents := map[int]int{500: 400, 400: 77, 77: 1}
	runs = []RunState{{Run: store.Run{ID: "deep", SupervisorPID: 77}}}
	MatchRuns(st.Sample, runs, func(pid int) int { return parents[pid] })
	if runs[0].Job != "pid:2000" {
		t.Fatalf("through ancestors: %+v", runs)
	}
	cycle := map[int]int{500: 501, 501: 500}
	runs = []RunState{{Run: store.Run{ID: "none", SupervisorPID: 77}}}
	MatchRuns(st.Sample, runs, func(pid int) int { return cycle[pid] })
	if runs[0].Job != "" {
		t.Fatalf("a parent cycle matched: %+v", runs)
	}
}
