package deploy_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// The tools' versions when none is on PATH: built from their Go modules
// through the module proxy (Makefile HELM_VERSION, KUSTOMIZE_VERSION).
const (
	helmVersion      = "v3.22.0"
	kustomizeVersion = "v5.7.1"
)

func helm(t *testing.T) string {
	return goTool(t, "HELM", "helm", "helm.sh/helm/v3/cmd/helm@"+helmVersion)
}

func kustomize(t *testing.T) string {
	return goTool(t, "KUSTOMIZE", "kustomize", "sigs.k8s.io/kustomize/kustomize/v5@"+kustomizeVersion)
}

// goTool returns $ENV, the tool on PATH, or one built with go install into
// the user's cache (minutes the first time; the Go build cache keeps later
// builds short). -short skips the build.
func goTool(t *testing.T, env, name, pkg string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("no %s on PATH and no cache directory to build one: %v", name, err)
	}
	dir := filepath.Join(cache, "torchmem-test", strings.ReplaceAll(pkg, "/", "_"))
	bin := filepath.Join(dir, name)
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	if testing.Short() {
		t.Skipf("no %s on PATH; -short does not build one (make deploy-check does)", name)
	}
	cmd := exec.Command("go", "install", pkg)
	cmd.Dir = t.TempDir() // outside this module: go install pkg@version
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOFLAGS=-mod=mod", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("no %s on PATH and go install %s failed (no module proxy?): %v\n%s", name, pkg, err, out)
	}
	return bin
}

// setArgs turns values into --set flags; a value of a string-only field
// (a node label) is given as "string:KEY=VALUE", for --set-string.
func setArgs(values []string) []string {
	var args []string
	for _, v := range values {
		if s, ok := strings.CutPrefix(v, "string:"); ok {
			args = append(args, "--set-string", s)
		} else {
			args = append(args, "--set", v)
		}
	}
	return args
}

// render runs helm template on the chart with the given values.
func render(t *testing.T, bin string, values ...string) []byte {
	t.Helper()
	args := append([]string{"template", "tm", "helm/torchmem", "--namespace", "monitoring"}, setArgs(values)...)
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return out
}

// everything turns on every optional part of the chart.
var everything = []string{
	"serviceMonitor.enabled=true", "podMonitor.enabled=true", "prometheusRule.enabled=true",
	"kernelLog.enabled=true", "webConfig.existingSecret=torchmem-web", "token.existingSecret=scrape-token",
	"string:nodeSelector.nvidia\\.com/gpu\\.present=true", "priorityClassName=system-node-critical", "runtimeClassName=nvidia",
	"serviceMonitor.labels.release=kube-prometheus-stack",
}

// TestHelmLint: helm lint --strict with the defaults and with everything on.
func TestHelmLint(t *testing.T) {
	bin := helm(t)
	for _, set := range [][]string{nil, everything} {
		args := append([]string{"lint", "--strict", "helm/torchmem"}, setArgs(set)...)
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Errorf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestHelmTemplateDefaults: the default rendering is a working agent: a
// DaemonSet, a headless Service, the token Secret it mounts; no
// prometheus-operator objects (their CRDs may be missing).
func TestHelmTemplateDefaults(t *testing.T) {
	m := decode(t, "helm template (defaults)", render(t, helm(t)))
	if len(m.daemonSets) != 1 || len(m.services) != 1 || len(m.secrets) != 1 || len(m.serviceMonitors)+len(m.podMonitors)+len(m.rules) != 0 {
		t.Fatalf("defaults render %d DaemonSets, %d Services, %d Secrets, %d monitors, %d rules",
			len(m.daemonSets), len(m.services), len(m.secrets), len(m.serviceMonitors)+len(m.podMonitors), len(m.rules))
	}
	ds := m.daemonSets[0]
	checkDaemonSet(t, "helm defaults", ds, false)
	checkService(t, "helm defaults", m.services[0], ds)
	if got := ds.Spec.Template.Spec.Volumes; !slices.ContainsFunc(got, func(v corev1.Volume) bool {
		return v.Secret != nil && v.Secret.SecretName == m.secrets[0].Name
	}) {
		t.Errorf("the DaemonSet does not mount the token Secret %s", m.secrets[0].Name)
	}
	if len(m.secrets[0].Data["token"]) < 32 {
		t.Errorf("token Secret holds %d bytes", len(m.secrets[0].Data["token"]))
	}
	if img := ds.Spec.Template.Spec.Containers[0].Image; img != "ghcr.io/torchmem/torchmem:"+appVersion(t) {
		t.Errorf("image %s: want the chart's appVersion as tag", img)
	}
}

// TestHelmTemplateEverything: every option on; the monitors scrape the
// Service's or pods' metrics port with the token Secret, and the
// PrometheusRule carries exactly deploy/prometheus/alerts.yml, which
// promtool accepts.
func TestHelmTemplateEverything(t *testing.T) {
	m := decode(t, "helm template (everything)", render(t, helm(t), everything...))
	if len(m.daemonSets) != 1 || len(m.services) != 1 || len(m.secrets) != 0 || len(m.serviceMonitors) != 1 || len(m.podMonitors) != 1 || len(m.rules) != 1 {
		t.Fatalf("everything renders %d DaemonSets, %d Services, %d Secrets (want 0: existingSecret), %d ServiceMonitors, %d PodMonitors, %d PrometheusRules",
			len(m.daemonSets), len(m.services), len(m.secrets), len(m.serviceMonitors), len(m.podMonitors), len(m.rules))
	}
	ds := m.daemonSets[0]
	checkDaemonSet(t, "helm everything", ds, true)
	checkService(t, "helm everything", m.services[0], ds)
	args := ds.Spec.Template.Spec.Containers[0].Args
	for _, want := range []string{"--token-file=/etc/torchmem/token/token", "--web.config.file=/etc/torchmem/web/web.yml"} {
		if !slices.Contains(args, want) {
			t.Errorf("args %v lack %s", args, want)
		}
	}
	if ds.Spec.Template.Spec.NodeSelector["nvidia.com/gpu.present"] != "true" {
		t.Errorf("nodeSelector %v", ds.Spec.Template.Spec.NodeSelector)
	}
	sm := m.serviceMonitors[0]
	if !labels.SelectorFromSet(sm.Spec.Selector.MatchLabels).Matches(labels.Set(m.services[0].Labels)) || sm.Metadata.Labels["release"] != "kube-prometheus-stack" {
		t.Errorf("ServiceMonitor selects %v, labelled %v; Service labels %v", sm.Spec.Selector.MatchLabels, sm.Metadata.Labels, m.services[0].Labels)
	}
	if !labels.SelectorFromSet(m.podMonitors[0].Spec.Selector.MatchLabels).Matches(labels.Set(ds.Spec.Template.Labels)) {
		t.Errorf("PodMonitor selects %v; pod labels %v", m.podMonitors[0].Spec.Selector.MatchLabels, ds.Spec.Template.Labels)
	}
	for _, e := range append(sm.Spec.Endpoints, m.podMonitors[0].Spec.PodMetricsEndpoints...) {
		if e.Port != "metrics" || e.Scheme != "https" || e.Authorization == nil || e.Authorization.Credentials == nil ||
			e.Authorization.Credentials.Name != "scrape-token" || e.Authorization.Credentials.Key != "token" {
			t.Errorf("endpoint %+v: want port metrics, https, bearer token from Secret scrape-token", e)
		}
		if !e.HonorLabels {
			t.Errorf("endpoint %+v: want honorLabels, so the jobs' pod/namespace/container labels are not renamed exported_*", e)
		}
		if len(e.Relabelings) != 1 || e.Relabelings[0].TargetLabel != "instance" {
			t.Errorf("endpoint relabelings %+v: want instance = the node's name", e.Relabelings)
		}
	}
	checkRuleCopy(t, m.rules[0])
}

// checkRuleCopy: the PrometheusRule's groups are alerts.yml's, and promtool
// accepts them as a rule file.
func checkRuleCopy(t *testing.T, pr prometheusRule) {
	t.Helper()
	b, err := os.ReadFile("prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var want struct {
		Groups []map[string]any `json:"groups"`
	}
	if err := yaml.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(pr.Spec.Groups, want.Groups) {
		t.Error("the PrometheusRule's groups differ from deploy/prometheus/alerts.yml")
	}
	p, err := exec.LookPath("promtool")
	if err != nil {
		t.Log("no promtool: the PrometheusRule's rules are not checked by it")
		return
	}
	out, err := yaml.Marshal(map[string]any{"groups": pr.Spec.Groups})
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(f, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(p, "check", "rules", f).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules on the PrometheusRule: %v\n%s", err, out)
	}
}

func appVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("helm/torchmem/Chart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c.AppVersion
}

// TestChartArgsAreServeFlags: every flag the chart passes (with every
// option on) is one `torchmem serve --help` lists: a renamed flag fails
// here, not on the nodes.
func TestChartArgsAreServeFlags(t *testing.T) {
	m := decode(t, "helm template (everything)", render(t, helm(t), append(everything, "metricsNoAuth=true")...))
	help, err := exec.Command(torchmem(t), "serve", "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("serve --help: %v\n%s", err, help)
	}
	args := m.daemonSets[0].Spec.Template.Spec.Containers[0].Args
	if args[0] != "serve" {
		t.Fatalf("args %v: not serve", args)
	}
	for _, a := range args[1:] {
		name, _, _ := strings.Cut(a, "=")
		if !strings.HasPrefix(name, "--") || !strings.Contains(string(help), "  "+name+" ") && !strings.Contains(string(help), " "+name+" ") {
			t.Errorf("the chart passes %s, which serve --help does not list", a)
		}
	}
}

// TestHelmValuesSchema: values.schema.json refuses a misspelt option, a
// port that is not a number and a node label that is not a string (helm
// template stops with the field's path instead of rendering a DaemonSet
// the API server would refuse, or silently ignoring the option).
func TestHelmValuesSchema(t *testing.T) {
	bin := helm(t)
	for _, bad := range []struct{ set, want string }{
		{"serviceMonitor.enable=true", "'enable' not allowed"},
		{"port=abc", "/port"},
		{"nodeSelector.gpu=true", "/nodeSelector/gpu"},
		{"image.pullPolicy=Sometimes", "/image/pullPolicy"},
	} {
		out, err := exec.Command(bin, "template", "tm", "helm/torchmem", "--set", bad.set).CombinedOutput()
		if err == nil || !strings.Contains(string(out), bad.want) {
			t.Errorf("helm template --set %s: %v, want an error naming %s:\n%s", bad.set, err, bad.want, out)
		}
	}
}
