package webassets

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/i18n"
)

func TestSeriesCatalogComplete(t *testing.T) {
	if m := seriesCatalog.Missing(); len(m) > 0 {
		t.Fatal(strings.Join(m, "\n"))
	}
	// Every series and marker has a label: a key shown raw is a bug.
	for _, s := range series {
		if !hasMessage("series." + s.Key) {
			t.Errorf("series %s has no label", s.Key)
		}
	}
	for _, m := range markers {
		if !hasMessage("event." + m.Kind) {
			t.Errorf("marker %s has no label", m.Kind)
		}
	}
}

func TestLabelsAndColours(t *testing.T) {
	for _, c := range []struct{ key, en, zh string }{
		{"cgroup_usage", "cgroup usage (memory.current)", "cgroup 用量 (memory.current)"},
		{"gpu1_used", "GPU 1 used (NVML, whole device)", "GPU 1 已用（NVML，整卡）"},
		{"gpu0_job_used", "GPU 0 used by the job", "GPU 0 任务占用"},
		{"gpu_pid_4127", "GPU memory of process 4127 (NVML)", "进程 4127 的 GPU 内存 (NVML)"},
		{"alloc_peak_reserved", "allocator peak reserved", "分配器峰值已保留"},
		{"something_new", "something_new", "something_new"},
	} {
		if got := Label(i18n.EN, c.key); got != c.en {
			t.Errorf("Label(en, %s) = %q, want %q", c.key, got, c.en)
		}
		if got := Label(i18n.ZH, c.key); got != c.zh {
			t.Errorf("Label(zh, %s) = %q, want %q", c.key, got, c.zh)
		}
	}
	g0, _ := Lookup("gpu0_used")
	g1, ok := Lookup("gpu1_used")
	if !ok || g0.Color == g1.Color || g0.Color != "#ff7f0e" {
		t.Errorf("gpu colours %s %s", g0.Color, g1.Color)
	}
	if p, _ := Lookup("pss_total"); p.Period != PSSPeriod {
		t.Errorf("PSS period %v", p.Period)
	}
	if SeriesKey("gpu_job_used", 3) != "gpu3_job_used" || MarkerColor("nope") != otherMarker || MarkerColor("oom_kill") != "#c0392b" {
		t.Error("SeriesKey/MarkerColor")
	}
}

// TestSeriesColoursDistinctPerChart: series drawn on one chart never share
// a colour.
func TestSeriesColoursDistinctPerChart(t *testing.T) {
	for _, chart := range [][]string{
		{"cgroup_usage", "pss_total", "rss_total", "swap_total"},
		{"alloc_allocated", "alloc_reserved"},
		{"gpu0_used", "gpu0_job_used", "gpu1_used", "gpu1_job_used"},
	} {
		seen := map[string]string{}
		for _, k := range chart {
			s, _ := Lookup(k)
			if o, dup := seen[s.Color]; dup {
				t.Errorf("%s and %s share %s", o, k, s.Color)
			}
			seen[s.Color] = k
		}
	}
}

func TestPaletteJSON(t *testing.T) {
	var p struct {
		Series map[string]struct {
			Label  string  `json:"label"`
			Color  string  `json:"color"`
			Step   bool    `json:"step"`
			CarryS float64 `json:"carry_s"`
		} `json:"series"`
		Markers   map[string]struct{ Label, Color string } `json:"markers"`
		GapFactor float64                                  `json:"gap_factor"`
	}
	if err := json.Unmarshal(PaletteJSON(i18n.ZH), &p); err != nil {
		t.Fatal(err)
	}
	pss := p.Series["pss_total"]
	if !pss.Step || pss.CarryS != 10 || p.Series["cgroup_usage"].Step || p.GapFactor != GapFactor {
		t.Fatalf("fill rule: %+v %+v", pss, p)
	}
	if p.Markers["limit"].Label != "上限 (memory.max)" || p.Series["gpu2_used"].Label != "GPU 2 已用（NVML，整卡）" {
		t.Fatalf("labels %+v", p.Markers)
	}
}
