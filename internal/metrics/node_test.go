package metrics

import (
	"errors"
	"strings"
	"testing"
)

func TestNodeInfo(t *testing.T) {
	st := fixtureState(t, 1, 1)
	out := scrape(t, st, Options{Version: "v0.0.0-test", NodeName: "gpu-node-7"})
	if !strings.Contains(out, `torchmem_node_info{node="gpu-node-7"} 1`) {
		t.Errorf("no node_info in:\n%s", out)
	}
	if out := scrape(t, st, Options{Version: "v0.0.0-test"}); strings.Contains(out, "torchmem_node_info") || strings.Contains(out, `source="node"`) {
		t.Errorf("node_info without a node name:\n%s", out)
	}
}

func TestNodeName(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "NODE_NAME" {
				return v
			}
			return ""
		}
	}
	host := func() (string, error) { return "host-a", nil }
	noHost := func() (string, error) { return "", errors.New("no name") }
	for _, c := range []struct {
		flag, env string
		host      func() (string, error)
		want      string
	}{
		{"flag-1", "k8s-node", host, "flag-1"},
		{"", "k8s-node", host, "k8s-node"},
		{"", "", host, "host-a"},
		{"", "", noHost, ""},
	} {
		if got := NodeName(c.flag, env(c.env), c.host); got != c.want {
			t.Errorf("NodeName(%q, NODE_NAME=%q) = %q, want %q", c.flag, c.env, got, c.want)
		}
	}
}
