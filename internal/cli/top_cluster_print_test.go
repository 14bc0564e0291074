package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/cluster"
	"github.com/torchmem/torchmem/internal/i18n"
)

func TestClusterCatalogComplete(t *testing.T) {
	for _, m := range clusterCat.Missing() {
		t.Error(m)
	}
}

func f64(v float64) *float64 { return &v }

// TestClusterLinesAlign: columns line up by display width in both
// languages, with a node named in Chinese (two columns a character).
func TestClusterLinesAlign(t *testing.T) {
	seen := time.Date(2026, 12, 1, 17, 0, 0, 0, time.UTC)
	s := &cluster.Summary{Prometheus: "http://p:9090", Time: seen.Add(90 * time.Second), WindowSeconds: 3600, Nodes: []cluster.Node{
		{Name: "节点-甲", Up: true, MemTotalBytes: f64(128 << 30), MemAvailableBytes: f64(100 << 30),
			GPUs: []cluster.GPU{{Index: "0", Model: "NVIDIA H200", UsedBytes: f64(4 << 30), TotalBytes: f64(140 << 30)}},
			Jobs: []cluster.Job{{ID: "pod:uid-1", Command: "python train.py", RSSBytes: f64(1 << 30),
				Workload: map[string]string{"namespace": "ml", "pod": "trainer-0", "container": "main", "kind": "kubernetes"}}}},
		{Name: "gpu-b", LastSeen: &seen, OOMs: cluster.OOMs{HostKills: 1, CUDA: map[string]int{"slurm:77.0": 2}}},
	}}
	for _, lang := range []string{"en", "zh"} {
		tag, _ := i18n.Parse(lang)
		lines := clusterLines(s, tag, 200)
		text := strings.Join(lines, "\n")
		var rows []string
		for _, l := range lines {
			if strings.HasPrefix(l, "节点-甲 ") || strings.HasPrefix(l, "gpu-b ") {
				rows = append(rows, l)
			}
		}
		if len(rows) < 3 {
			t.Fatalf("%s: rows %q in\n%s", lang, rows, text)
		}
		// The state column starts at the same display column in the node table.
		colA := i18n.Width(rows[0][:strings.Index(rows[0], clusterCat.Sprintf(tag, "up"))])
		colB := i18n.Width(rows[1][:strings.Index(rows[1], clusterCat.Sprintf(tag, "down"))])
		if colA != colB {
			t.Errorf("%s: state column at %d and %d:\n%s", lang, colA, colB, text)
		}
		for _, want := range []string{"ml/trainer-0/main", "1m30s", "slurm:77.0"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: no %q in\n%s", lang, want, text)
			}
		}
	}
}
