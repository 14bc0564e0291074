package metrics

import "github.com/prometheus/client_golang/prometheus"

// nodeSource names the node the agent runs on. Prometheus tells targets
// apart by their instance (host:port), which says nothing to a person
// and changes with the scrape address; the cluster view (torchmem top
// --prometheus) joins every series of an instance to this name. It is
// the one node-identity series: dcgm-exporter spells the same fact as a
// Hostname label on every series, which costs a label per series.
type nodeSource struct{ node string }

var nodeInfo = desc("node_info", "Always 1; node is the name of the node this agent samples (serve --node-name, else $NODE_NAME, else the host name).", "node")

func (nodeSource) name() string { return "node" }

func (nodeSource) describe(ch chan<- *prometheus.Desc) { ch <- nodeInfo }

// collect exports the name, or nothing when none was configured (a
// registry built by a test, or a host without a name).
func (s nodeSource) collect(_ *State, ch chan<- prometheus.Metric) error {
	if s.node == "" {
		return errAbsent
	}
	gauge(ch, nodeInfo, 1, s.node)
	return nil
}

// NodeName is the name an agent gives its node: flag (serve --node-name)
// when set, else $NODE_NAME (what a Kubernetes DaemonSet passes from
// spec.nodeName through the downward API, so the name matches the
// cluster's), else the host name; "" when all three are empty.
func NodeName(flag string, getenv func(string) string, hostname func() (string, error)) string {
	if flag != "" {
		return flag
	}
	if v := getenv("NODE_NAME"); v != "" {
		return v
	}
	h, _ := hostname()
	return h
}
