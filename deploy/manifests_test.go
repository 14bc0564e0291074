package deploy_test

import (
	"bytes"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// The port serve listens on in every manifest (docs/serve.md: why 10464).
const agentPort = 10464

// manifests is one rendering: the objects by kind, decoded strictly into
// the Kubernetes API types (an unknown or misspelt field is an error, as
// kubectl apply --validate=strict makes it).
type manifests struct {
	daemonSets      []appsv1.DaemonSet
	services        []corev1.Service
	secrets         []corev1.Secret
	namespaces      []corev1.Namespace
	serviceMonitors []monitor
	podMonitors     []monitor
	rules           []prometheusRule
}

// monitor is the part of prometheus-operator's ServiceMonitor and
// PodMonitor (monitoring.coreos.com/v1) the chart writes, with the field
// names of pkg/apis/monitoring/v1 (servicemonitor_types.go,
// podmonitor_types.go, types.go: Endpoint, PodMetricsEndpoint,
// SafeAuthorization, RelabelConfig). The operator's Go module pulls in
// controller-runtime, so its types are mirrored here, strictly decoded.
type monitor struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       struct {
		Selector          metav1.LabelSelector `json:"selector"`
		NamespaceSelector struct {
			MatchNames []string `json:"matchNames"`
		} `json:"namespaceSelector"`
		Endpoints           []endpoint `json:"endpoints"`
		PodMetricsEndpoints []endpoint `json:"podMetricsEndpoints"`
	} `json:"spec"`
}

type endpoint struct {
	Port          string `json:"port"`
	Path          string `json:"path"`
	HonorLabels   bool   `json:"honorLabels"`
	Scheme        string `json:"scheme"`
	Interval      string `json:"interval"`
	ScrapeTimeout string `json:"scrapeTimeout"`
	Authorization *struct {
		Type        string                    `json:"type"`
		Credentials *corev1.SecretKeySelector `json:"credentials"`
	} `json:"authorization"`
	Relabelings []struct {
		SourceLabels []string `json:"sourceLabels"`
		TargetLabel  string   `json:"targetLabel"`
	} `json:"relabelings"`
}

type prometheusRule struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       struct {
		Groups []map[string]any `json:"groups"`
	} `json:"spec"`
}

// decode splits a multi-document YAML stream and decodes each object by
// its kind.
func decode(t *testing.T, where string, stream []byte) manifests {
	t.Helper()
	var m manifests
	for i, doc := range bytes.Split(stream, []byte("\n---")) {
		var head struct{ APIVersion, Kind string }
		if err := yaml.Unmarshal(doc, &head); err != nil {
			t.Fatalf("%s, document %d: %v", where, i, err)
		}
		var err error
		switch head.APIVersion + " " + head.Kind {
		case " ":
			continue // comments only
		case "apps/v1 DaemonSet":
			m.daemonSets = append(m.daemonSets, appsv1.DaemonSet{})
			err = yaml.UnmarshalStrict(doc, &m.daemonSets[len(m.daemonSets)-1])
		case "v1 Service":
			m.services = append(m.services, corev1.Service{})
			err = yaml.UnmarshalStrict(doc, &m.services[len(m.services)-1])
		case "v1 Namespace":
			m.namespaces = append(m.namespaces, corev1.Namespace{})
			err = yaml.UnmarshalStrict(doc, &m.namespaces[len(m.namespaces)-1])
		case "v1 Secret":
			m.secrets = append(m.secrets, corev1.Secret{})
			err = yaml.UnmarshalStrict(doc, &m.secrets[len(m.secrets)-1])
		case "monitoring.coreos.com/v1 ServiceMonitor":
			m.serviceMonitors = append(m.serviceMonitors, monitor{})
			err = yaml.UnmarshalStrict(doc, &m.serviceMonitors[len(m.serviceMonitors)-1])
		case "monitoring.coreos.com/v1 PodMonitor":
			m.podMonitors = append(m.podMonitors, monitor{})
			err = yaml.UnmarshalStrict(doc, &m.podMonitors[len(m.podMonitors)-1])
		case "monitoring.coreos.com/v1 PrometheusRule":
			m.rules = append(m.rules, prometheusRule{})
			err = yaml.UnmarshalStrict(doc, &m.rules[len(m.rules)-1])
		default:
			t.Errorf("%s, document %d: unexpected %s %s", where, i, head.APIVersion, head.Kind)
		}
		if err != nil {
			t.Errorf("%s, document %d (%s): %v", where, i, head.Kind, err)
		}
	}
	return m
}

// checkDaemonSet checks what the agent needs to work on a node.
func checkDaemonSet(t *testing.T, where string, ds appsv1.DaemonSet, kernelLog bool) {
	t.Helper()
	fail := func(format string, a ...any) {
		t.Errorf("%s: DaemonSet %s: %s", where, ds.Name, fmt.Sprintf(format, a...))
	}
	sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil || !sel.Matches(labels.Set(ds.Spec.Template.Labels)) {
		fail("selector %v does not select the pod template's labels %v (%v)", ds.Spec.Selector, ds.Spec.Template.Labels, err)
	}
	pod := ds.Spec.Template.Spec
	if !pod.HostPID {
		fail("no hostPID: the agent would see only its own processes")
	}
	if !slices.ContainsFunc(pod.Tolerations, func(tl corev1.Toleration) bool {
		return (tl.Key == "nvidia.com/gpu" || tl.Key == "" && tl.Operator == corev1.TolerationOpExists) &&
			(tl.Effect == corev1.TaintEffectNoSchedule || tl.Effect == "")
	}) {
		fail("does not tolerate the nvidia.com/gpu NoSchedule taint of GPU nodes")
	}
	if len(pod.Containers) != 1 {
		fail("%d containers", len(pod.Containers))
		return
	}
	c := pod.Containers[0]
	if !slices.Contains(c.Args, fmt.Sprintf("--listen=0.0.0.0:%d", agentPort)) || len(c.Ports) != 1 || c.Ports[0].ContainerPort != agentPort || c.Ports[0].Name != "metrics" {
		fail("does not listen on port %d named metrics: args %v, ports %v", agentPort, c.Args, c.Ports)
	}
	if !slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--token-file=") }) {
		fail("listens on the pod network without --token-file")
	}
	if slices.Contains(c.Args, "--no-kernel-log") == kernelLog {
		fail("kernel log %v but args %v", kernelLog, c.Args)
	}
	if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool {
		return e.Name == "NODE_NAME" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "spec.nodeName"
	}) {
		fail("no NODE_NAME from the downward API (spec.nodeName)")
	}
	if c.Resources.Limits.Memory().IsZero() {
		fail("no memory limit")
	}
	checkMounts(t, fail, pod, c, kernelLog)
}

// checkMounts: the host's /proc, /sys and pod-resources socket are
// mounted read-only from the host paths, /dev/kmsg only with the kernel
// log (and then privileged: the device cgroup refuses it otherwise), and
// every mount has its volume.
func checkMounts(t *testing.T, fail func(string, ...any), pod corev1.PodSpec, c corev1.Container, kernelLog bool) {
	t.Helper()
	vols := map[string]corev1.Volume{}
	for _, v := range pod.Volumes {
		vols[v.Name] = v
	}
	hostRO := map[string]bool{}
	for _, m := range c.VolumeMounts {
		v, ok := vols[m.Name]
		if !ok {
			fail("mount %s has no volume", m.Name)
			continue
		}
		if v.HostPath != nil {
			hostRO[v.HostPath.Path] = m.ReadOnly
		}
	}
	for _, p := range []string{"/proc", "/sys", "/var/lib/kubelet/pod-resources"} {
		if ro, ok := hostRO[p]; !ok || !ro {
			fail("host %s not mounted read-only (mounted: %v)", p, ok)
		}
	}
	privileged := c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged
	if _, ok := hostRO["/dev/kmsg"]; ok != kernelLog || privileged != kernelLog {
		fail("kernel log %v: /dev/kmsg mounted %v, privileged %v", kernelLog, ok, privileged)
	}
	if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		fail("root file system not read-only")
	}
}

// checkService: the Service selects the DaemonSet's pods on the port
// named metrics.
func checkService(t *testing.T, where string, svc corev1.Service, ds appsv1.DaemonSet) {
	t.Helper()
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(ds.Spec.Template.Labels)) || len(svc.Spec.Selector) == 0 {
		t.Errorf("%s: Service %s selector %v does not select the agent's pods", where, svc.Name, svc.Spec.Selector)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "metrics" || svc.Spec.Ports[0].TargetPort.String() != "metrics" {
		t.Errorf("%s: Service %s ports %v: want one named metrics to the pod's metrics port", where, svc.Name, svc.Spec.Ports)
	}
}

// TestKubernetesManifests: kustomize build of the base in
// deploy/kubernetes (what kubectl apply -k applies) decodes strictly and
// carries what the agent needs, in the kustomization's namespace.
func TestKubernetesManifests(t *testing.T) {
	out, err := exec.Command(kustomize(t), "build", "kubernetes").Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("kustomize build: %v\n%s", err, stderr)
	}
	m := decode(t, "deploy/kubernetes", out)
	if len(m.daemonSets) != 1 || len(m.services) != 1 {
		t.Fatalf("deploy/kubernetes: %d DaemonSets, %d Services", len(m.daemonSets), len(m.services))
	}
	checkDaemonSet(t, "deploy/kubernetes", m.daemonSets[0], false)
	checkService(t, "deploy/kubernetes", m.services[0], m.daemonSets[0])
	if ns := m.daemonSets[0].Namespace; ns != "torchmem" {
		t.Errorf("namespace %q", ns)
	}
}
