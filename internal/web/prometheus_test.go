package web

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/torchmem/torchmem/internal/metrics"
)

// deployFile is a file of the repository's deploy/ directory.
func deployFile(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "deploy", rel))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

var metricName = regexp.MustCompile(`\btorchmem_[a-z0-9_]+`)

// checkNames fails for each torchmem_ metric in expr that torchmem does not export.
func checkNames(t *testing.T, where, expr string) {
	t.Helper()
	names := metrics.Names()
	for _, n := range metricName.FindAllString(expr, -1) {
		if !slices.Contains(names, n) {
			t.Errorf("%s: %s is not a torchmem metric (expr %s)", where, n, expr)
		}
	}
}

// startPrometheus starts Debian's Prometheus on a free loopback port with a
// temporary storage directory, scraping target every second with token and
// loading deploy/prometheus/alerts.yml. It returns its API base URL.
func startPrometheus(t *testing.T, target, token string) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("no prometheus on PATH (Debian package prometheus): the real-scrape test needs one")
	}
	dir := t.TempDir()
	tokFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokFile, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [%q]
scrape_configs:
  - job_name: torchmem
    authorization: {type: Bearer, credentials_file: %q}
    static_configs: [{targets: [%q]}]
`, deployFile(t, "prometheus/alerts.yml"), tokFile, target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freePort(t)
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	log, _ := os.Create(filepath.Join(dir, "prometheus.log"))
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("prometheus log:\n%s", b)
		}
	})
	return "http://" + addr
}

func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

type promResult struct {
	Status string `json:"status"`
	Error  string `json:"error"`
	Data   struct {
		Result []struct {
			Metric map[string]string `json:"metric"`
		} `json:"result"`
		Groups []struct {
			Rules []struct {
				Name   string `json:"name"`
				Health string `json:"health"`
				Error  string `json:"lastError"`
			} `json:"rules"`
		} `json:"groups"`
	} `json:"data"`
}

func promGet(base, path string) (promResult, error) {
	var r promResult
	resp, err := http.Get(base + path)
	if err != nil {
		return r, err
	}
	defer resp.Body.Close()
	err = json.NewDecoder(resp.Body).Decode(&r)
	return r, err
}

// waitFor polls until ok or 60 s have passed.
func waitFor(t *testing.T, what string, ok func() (bool, string)) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		var done bool
		if done, last = ok(); done {
			return
		}
	}
	t.Fatalf("%s: gave up after 60 s (last: %s)", what, last)
}

// TestPrometheusScrapesServe: a real Prometheus scrapes a real serve (with
// its bearer token), stores torchmem series with the job_id label intact,
// loads the shipped alert rules and evaluates them, and answers every
// query of the shipped Grafana dashboard.
func TestPrometheusScrapesServe(t *testing.T) {
	f := newFixture(t, fixtureOpts{token: testToken, samples: 30})
	prom := startPrometheus(t, strings.TrimPrefix(f.url, "http://"), testToken)
	q := "/api/v1/query?query=" + url.QueryEscape(`torchmem_job_info{job="torchmem",job_id=~"pid:2000@[0-9]+"}`)
	waitFor(t, "a torchmem series in Prometheus", func() (bool, string) {
		r, err := promGet(prom, q)
		if err != nil {
			return false, err.Error()
		}
		return r.Status == "success" && len(r.Data.Result) == 1, fmt.Sprintf("%+v", r)
	})
	waitFor(t, "alert rules evaluated", func() (bool, string) {
		r, err := promGet(prom, "/api/v1/rules")
		if err != nil || len(r.Data.Groups) != alertGroups {
			return false, fmt.Sprintf("%v %+v", err, r)
		}
		n := 0
		for _, g := range r.Data.Groups {
			for _, rule := range g.Rules {
				if rule.Health != "ok" {
					return false, rule.Name + ": " + rule.Health + " " + rule.Error
				}
				n++
			}
		}
		return n == alertRules, fmt.Sprintf("%d rules", n)
	})
	for _, expr := range grafanaExprs(t) {
		e := strings.NewReplacer("$instance", ".*", "$__rate_interval", "1m", "$__range", "5m").Replace(expr)
		r, err := promGet(prom, "/api/v1/query?query="+url.QueryEscape(e))
		if err != nil || r.Status != "success" {
			t.Errorf("dashboard query %s: %v %s", e, err, r.Error)
		}
	}
}

// grafanaExprs returns every PromQL expression of the shipped dashboard.
func grafanaExprs(t *testing.T) []string {
	b, err := os.ReadFile(deployFile(t, "grafana/torchmem-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title  string
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
		Annotations struct{ List []struct{ Expr string } }
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	var out []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			out = append(out, tg.Expr)
		}
	}
	for _, a := range d.Annotations.List {
		out = append(out, a.Expr)
	}
	return out
}

func TestGrafanaDashboardUsesRealMetrics(t *testing.T) {
	exprs := grafanaExprs(t)
	if len(exprs) < 15 {
		t.Fatalf("dashboard has %d queries", len(exprs))
	}
	for _, e := range exprs {
		if !metricName.MatchString(e) {
			t.Errorf("query %q uses no torchmem metric", e)
		}
		checkNames(t, "dashboard", e)
	}
}

// The groups and rules of deploy/prometheus/alerts.yml (its promtool unit
// tests are deploy/prometheus/alerts_test.yml, run by deploy/deploy_test.go).
const alertGroups, alertRules = 3, 13

func TestAlertRules(t *testing.T) {
	path := deployFile(t, "prometheus/alerts.yml")
	if promtool, err := exec.LookPath("promtool"); err == nil {
		if out, err := exec.Command(promtool, "check", "rules", path).CombinedOutput(); err != nil {
			t.Errorf("promtool check rules: %v\n%s", err, out)
		}
		cfg := deployFile(t, "prometheus/scrape.yml")
		if out, err := exec.Command(promtool, "check", "config", "--syntax-only", cfg).CombinedOutput(); err != nil {
			t.Errorf("promtool check config: %v\n%s", err, out)
		}
	} else {
		t.Log("no promtool: rule syntax left to the real-Prometheus test")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct{ Alert, Expr string }
		}
	}
	if err := yaml.Unmarshal(b, &rules); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			names = append(names, r.Alert)
			checkNames(t, r.Alert, r.Expr)
		}
	}
	if len(rules.Groups) != alertGroups || len(names) != alertRules {
		t.Errorf("alerts.yml has %d groups, %d rules; the real-Prometheus test waits for %d, %d", len(rules.Groups), len(names), alertGroups, alertRules)
	}
	for _, want := range []string{"TorchmemAgentDown", "TorchmemJobNearCgroupLimit", "TorchmemKernelOOMKill", "TorchmemJobOOMKill", "TorchmemCUDAOutOfMemory", "TorchmemJobMemoryGrowth", "TorchmemHostMemoryPressure"} {
		if !slices.Contains(names, want) {
			t.Errorf("alerts.yml lacks %s", want)
		}
	}
}
