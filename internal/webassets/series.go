package webassets

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/language"
)

// Series is one plotted quantity as every surface (the HTML report, the
// dashboard, the TUI) shows it: one colour and one human label per key,
// so a series looks the same wherever it is drawn. Key is the sample's
// JSON name (internal/store.Sample); per-device GPU keys are written
// "gpu_used" and numbered by SeriesKey.
type Series struct {
	Key   string
	Color string
	// Period is how often the source is read when that is slower than the
	// sampling interval (PSS: smaps_rollup costs a page-table walk, so the
	// sampler reads it every 5 s and carries it between reads); 0: read at
	// every sample. A slow series is drawn stepped and carried forward.
	Period time.Duration
}

// PSSPeriod is how often the sampler reads smaps_rollup (internal/sample
// reads PSS every 5 s; the post-mortem says "read every 5s").
const PSSPeriod = 5 * time.Second

// series is the one table of plotted series. Colours follow the
// Tableau 10 palette (colour-blind safer than uPlot's defaults), chosen
// so the series that share a chart differ most.
var series = []Series{
	{Key: "cgroup_usage", Color: "#1f77b4"},
	{Key: "pss_total", Color: "#d62728", Period: PSSPeriod},
	{Key: "rss_total", Color: "#2ca02c"},
	{Key: "swap_total", Color: "#9467bd"},
	{Key: "host_available", Color: "#17becf"},
	{Key: "gpu_used", Color: "#ff7f0e"},
	{Key: "gpu_job_used", Color: "#8c564b"},
	{Key: "alloc_allocated", Color: "#e377c2"},
	{Key: "alloc_reserved", Color: "#7f7f7f"},
	{Key: "step", Color: "#bcbd22"},
	{Key: "step_peak_allocated", Color: "#e377c2"},
	{Key: "step_peak_reserved", Color: "#7f7f7f"},
	{Key: "step_seconds", Color: "#1f77b4"},
}

// gpuShades tints per-device GPU series: device 0 keeps the table's
// colour, the next devices darker and lighter ones.
var gpuShades = map[string][]string{
	"gpu_used":     {"#ff7f0e", "#b35806", "#fdb863", "#e08214", "#7f3b08", "#fee0b6", "#f1a340", "#542788"},
	"gpu_job_used": {"#8c564b", "#5e3a32", "#c49c94", "#a0522d", "#3e2723", "#d7b8af", "#6d4c41", "#bcaaa4"},
}

// Marker is a vertical event line (Kind is store.Event.Kind) or, with
// Kind "limit", the horizontal memory.max line.
type Marker struct {
	Kind  string
	Color string
}

// LimitKind is the marker kind of the cgroup limit line.
const LimitKind = "limit"

// markers colour events by what they mean: red for the end of memory
// (kills, OOMs), orange for warnings and thresholds, purple for a policy
// acting, blue for cleanup, grey for the exit.
var markers = []Marker{
	{Kind: LimitKind, Color: "#c0392b"},
	{Kind: "oom_kill", Color: "#c0392b"},
	{Kind: "cgroup_oom", Color: "#c0392b"},
	{Kind: "cuda_oom", Color: "#c0392b"},
	{Kind: "exception", Color: "#a93226"},
	{Kind: "warn", Color: "#e67e22"},
	{Kind: "cgroup_threshold", Color: "#e67e22"},
	{Kind: "stop", Color: "#8e44ad"},
	{Kind: "snapshot", Color: "#2c3e50"},
	{Kind: "tensor_cycle", Color: "#2c3e50"},
	{Kind: "cleanup", Color: "#2980b9"},
	{Kind: "signal", Color: "#555555"},
	{Kind: "exit", Color: "#555555"},
}

// otherMarker colours an event kind the table does not know.
const otherMarker = "#999999"

// SeriesKey is the key of device dev's GPU series (base "gpu_used" or
// "gpu_job_used"): "gpu0_used", "gpu1_job_used".
func SeriesKey(base string, dev int) string {
	return "gpu" + strconv.Itoa(dev) + strings.TrimPrefix(base, "gpu")
}

// splitKey splits a per-device GPU key ("gpu1_used") into its base
// ("gpu_used") and device ("1"); other keys come back whole, dev "".
func splitKey(key string) (base, dev string) {
	if pid, ok := strings.CutPrefix(key, "gpu_pid_"); ok { // store.PeakGPUPID
		return "gpu_pid", pid
	}
	rest, ok := strings.CutPrefix(key, "gpu")
	if i := strings.IndexByte(rest, '_'); ok && i > 0 {
		if _, err := strconv.Atoi(rest[:i]); err == nil {
			return "gpu" + rest[i:], rest[:i]
		}
	}
	return key, ""
}

// Lookup is the series of key, with per-device GPU keys ("gpu1_used")
// resolved to their base and shade; ok is false for an unknown key.
func Lookup(key string) (s Series, ok bool) {
	base, dev := splitKey(key)
	n, _ := strconv.Atoi(dev)
	for _, s := range series {
		if s.Key == base {
			if shades := gpuShades[base]; n > 0 {
				s.Color = shades[n%len(shades)]
			}
			s.Key = key
			return s, true
		}
	}
	return Series{Key: key, Color: otherMarker}, false
}

// MarkerColor is the colour of an event kind's line.
func MarkerColor(kind string) string {
	for _, m := range markers {
		if m.Kind == kind {
			return m.Color
		}
	}
	return otherMarker
}

// Label is key's human name in lang ("cgroup usage (memory.current)");
// an unknown key is shown as it is.
func Label(lang language.Tag, key string) string {
	base, dev := splitKey(key)
	id := "series." + base
	switch {
	case !hasMessage(id):
		return key
	case strings.HasPrefix(base, "gpu_") && base != "gpu_pid" || dev != "":
		if dev == "" {
			dev = "*"
		}
		return seriesCatalog.Sprintf(lang, id, dev)
	}
	return seriesCatalog.Sprintf(lang, id)
}

// EventLabel is an event kind's name in a chart legend.
func EventLabel(lang language.Tag, kind string) string {
	if id := "event." + kind; hasMessage(id) {
		return seriesCatalog.Sprintf(lang, id)
	}
	return kind
}

// PaletteJSON is the table as the pages' scripts read it (inlined in a
// <script type="application/json">): per series key its label in lang,
// colour and carry limit in seconds (0: not stepped); per marker kind
// its label and colour; and the fill rule's factors, so the dashboard
// draws gaps exactly as the report does.
func PaletteJSON(lang language.Tag) []byte {
	type entry struct {
		Label  string  `json:"label"`
		Color  string  `json:"color"`
		Step   bool    `json:"step,omitempty"`
		CarryS float64 `json:"carry_s,omitempty"`
	}
	out := struct {
		Series    map[string]entry `json:"series"`
		Markers   map[string]entry `json:"markers"`
		GapFactor float64          `json:"gap_factor"`
	}{Series: map[string]entry{}, Markers: map[string]entry{}, GapFactor: GapFactor}
	for _, s := range series {
		e := entry{Label: Label(lang, s.Key), Color: s.Color}
		if s.Period > 0 {
			e.Step, e.CarryS = true, CarryLimit(s.Period).Seconds()
		}
		if shades := gpuShades[s.Key]; shades != nil {
			for dev := range shades {
				k := SeriesKey(s.Key, dev)
				d, _ := Lookup(k)
				out.Series[k] = entry{Label: Label(lang, k), Color: d.Color}
			}
		}
		out.Series[s.Key] = e
	}
	for _, m := range markers {
		out.Markers[m.Kind] = entry{Label: EventLabel(lang, m.Kind), Color: m.Color}
	}
	b, _ := json.Marshal(out) // a map of strings and numbers: cannot fail
	return b
}
