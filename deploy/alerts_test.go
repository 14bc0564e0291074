// Package deploy_test checks the files under deploy/ with the tools that
// consume them: promtool for the alert rules and their unit tests, helm
// for the chart, the Kubernetes API types (strict decoding) for every
// manifest. `make deploy-check` runs the same checks.
package deploy_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/torchmem/torchmem/internal/metrics"
)

const runbookBase = "https://github.com/torchmem/torchmem/blob/main/docs/alerts.md#"

type rule struct {
	Alert, Expr string
	For         string
	Labels      map[string]string
	Annotations map[string]string
}

type ruleFile struct {
	Groups []struct {
		Name  string
		Rules []rule
	}
}

func readRules(t *testing.T, path string) []rule {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f ruleFile
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []rule
	for _, g := range f.Groups {
		out = append(out, g.Rules...)
	}
	return out
}

// promtool returns Debian's promtool (package prometheus, which .ci/run
// installs), or skips with a notice.
func promtool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("no promtool on PATH (apt-get install prometheus): the alert rules' unit tests need it")
	}
	return p
}

// TestAlertRuleUnitTests runs promtool check rules and the situations of
// prometheus/alerts_test.yml.
func TestAlertRuleUnitTests(t *testing.T) {
	bin := promtool(t)
	for _, args := range [][]string{
		{"check", "rules", "prometheus/alerts.yml"},
		{"test", "rules", "prometheus/alerts_test.yml"},
	} {
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestEveryAlertIsTested: each alert of alerts.yml appears in a test of
// alerts_test.yml both firing and, in some situation, silent.
func TestEveryAlertIsTested(t *testing.T) {
	b, err := os.ReadFile("prometheus/alerts_test.yml")
	if err != nil {
		t.Fatal(err)
	}
	var tests struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string
				ExpAlerts []map[string]any `yaml:"exp_alerts"`
			} `yaml:"alert_rule_test"`
		}
	}
	if err := yaml.Unmarshal(b, &tests); err != nil {
		t.Fatal(err)
	}
	fires, silent := map[string]bool{}, map[string]bool{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			fires[a.Alertname] = fires[a.Alertname] || len(a.ExpAlerts) > 0
			silent[a.Alertname] = silent[a.Alertname] || len(a.ExpAlerts) == 0
		}
	}
	for _, r := range readRules(t, "prometheus/alerts.yml") {
		if !fires[r.Alert] {
			t.Errorf("%s: no test where it fires", r.Alert)
		}
		if !silent[r.Alert] {
			t.Errorf("%s: no test where it stays silent", r.Alert)
		}
	}
}

var heading = regexp.MustCompile(`(?m)^## (Torchmem\w+)$`)

// TestAlertRunbooks: every alert has a severity, a summary, a description
// and a runbook_url whose section exists in docs/alerts.md, and every
// section there belongs to an alert.
func TestAlertRunbooks(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "alerts.md"))
	if err != nil {
		t.Fatal(err)
	}
	var sections []string
	for _, m := range heading.FindAllSubmatch(doc, -1) {
		sections = append(sections, string(m[1]))
	}
	var alerts []string
	for _, r := range readRules(t, "prometheus/alerts.yml") {
		alerts = append(alerts, r.Alert)
		if !slices.Contains([]string{"critical", "warning", "info"}, r.Labels["severity"]) {
			t.Errorf("%s: severity %q", r.Alert, r.Labels["severity"])
		}
		if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
			t.Errorf("%s: summary or description missing", r.Alert)
		}
		if want := runbookBase + strings.ToLower(r.Alert); r.Annotations["runbook_url"] != want {
			t.Errorf("%s: runbook_url %q, want %q", r.Alert, r.Annotations["runbook_url"], want)
		}
		if !slices.Contains(sections, r.Alert) {
			t.Errorf("%s: no section \"## %s\" in docs/alerts.md", r.Alert, r.Alert)
		}
	}
	for _, s := range sections {
		if !slices.Contains(alerts, s) {
			t.Errorf("docs/alerts.md has a runbook for %s, which alerts.yml does not have", s)
		}
	}
}

var metricName = regexp.MustCompile(`\btorchmem_[a-z0-9_]+`)

// TestAlertsUseRealMetrics: every torchmem_ metric an alert reads is one
// serve exports, and no alert reads GPU memory used or allocator reserved
// bytes: on a healthy job the caching allocator keeps them near the whole
// GPU (docs/alerts.md, "What is not alerted on").
func TestAlertsUseRealMetrics(t *testing.T) {
	names := metrics.Names()
	for _, r := range readRules(t, "prometheus/alerts.yml") {
		for _, n := range metricName.FindAllString(r.Expr, -1) {
			if !slices.Contains(names, n) {
				t.Errorf("%s: %s is not a metric torchmem exports", r.Alert, n)
			}
			if n == "torchmem_gpu_memory_used_bytes" || n == "torchmem_job_allocator_reserved_bytes" {
				t.Errorf("%s alerts on %s: reserved GPU memory is high on healthy jobs", r.Alert, n)
			}
		}
	}
}

// TestChartCarriesTheAlerts: the Helm chart's PrometheusRule is built from
// a copy of alerts.yml (a chart cannot read files outside its directory).
func TestChartCarriesTheAlerts(t *testing.T) {
	a, err := os.ReadFile("prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("helm/torchmem/files/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("helm/torchmem/files/alerts.yml differs from prometheus/alerts.yml: cp deploy/prometheus/alerts.yml deploy/helm/torchmem/files/")
	}
}
