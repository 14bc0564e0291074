package web

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/torchmem/torchmem/internal/webassets"
)

// TestDashboardChartsInBrowser: the node page's live chart first paints
// one point on a minute, not years; the run page's charts have the
// legend of their markers, whole-second 24-hour ticks and no span over
// gaps; the pages' fill rule is webassets.Gaps; ?lang=zh gives Chinese.
func TestDashboardChartsInBrowser(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t, fixtureOpts{})
	if err := chromedp.Do(ctx, chromedp.Navigate(f.url+"/")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`live.plot !== null && live.t.length >= 1`)); err != nil {
		t.Fatalf("no live chart: %v", err)
	}
	span, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`[live.t.length, live.plot.scales.x.max - live.plot.scales.x.min]`))
	if err != nil || span[0] == 1 && span[1] != 61 || span[1] > 3600 {
		t.Errorf("live chart with %v points spans %v s (%v)", span[0], span[1], err)
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(f.url+"/runs/"+f.running)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.body.dataset.ready === "1"`)); err != nil {
		t.Fatalf("run page never got ready: %v", err)
	}
	kinds, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#charts .marks')].map(m => m.dataset.kinds)`))
	if err != nil || len(kinds) != 5 || kinds[0] != "cuda_oom,cleanup" {
		t.Errorf("legends %q (%v), want the fixture's cuda_oom and cleanup under each chart", kinds, err)
	}
	legend, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#charts .marks').textContent`))
	if legend != "Markers: CUDA OOMcleanup" {
		t.Errorf("legend %q", legend)
	}
	labels, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`runView.plots[0].series.map(s => s.label)`))
	if len(labels) < 2 || labels[0] != "Time" || labels[1] != "cgroup usage (memory.current)" {
		t.Errorf("series labels %q", labels)
	}
	ticks, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`runView.plots[0].axes[0]._values || []`))
	if len(ticks) < 2 || !strings.Contains(ticks[0], "\n20") {
		t.Errorf("ticks %q: want the date under the first", ticks)
	}
	for _, v := range ticks {
		if strings.ContainsAny(v, "APM.") || len(strings.Split(strings.Split(v, "\n")[0], ":")) != 3 {
			t.Errorf("tick %q is not HH:MM:SS", v)
		}
	}
	if span, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`runView.plots.some(p => p.series.slice(1).some(s => s.spanGaps))`)); span {
		t.Error("a run page series spans gaps")
	}
	testFillRuleMatchesGo(t, ctx)
	// A run whose PSS peak is above its cgroup usage peak gets the note
	// under the host-memory chart (the fixture's is not: forced here).
	if none, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('#charts .note') === null`)); !none {
		t.Error("a note under a run whose PSS is not above cgroup usage")
	}
	note, err := chromedp.Run(ctx, chromedp.Evaluate[string](`runView.pssNote = true; runView.plots.forEach(p => p.destroy()); runView.plots = [];
		loadSamples().then(() => (document.querySelector('#charts .chart .note') || {}).textContent || "")`, chromedp.EvalAwaitPromise))
	if err != nil || !strings.HasPrefix(note, "PSS is above cgroup usage: PSS counts every shared page") {
		t.Errorf("PSS note %q (%v)", note, err)
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(f.url+"/runs/"+f.running+"?lang=zh")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.body.dataset.ready === "1"`)); err != nil {
		t.Fatalf("zh run page never got ready: %v", err)
	}
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	for _, want := range []string{"节点", "运行记录", "内存随时间变化", "任务主机内存", "标记：", "事件", "状态", "时长", "峰值：CGROUP 用量 (MEMORY.CURRENT)", "完整运行", "类型", "消息"} {
		if !strings.Contains(text, want) {
			t.Errorf("zh run page lacks %q", want)
		}
	}
	for _, bad := range []string{"Memory over time", "Markers:", "Status", "Duration", "Events"} {
		if strings.Contains(text, bad) {
			t.Errorf("zh run page has %q", bad)
		}
	}
	if href, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('nav-runs').getAttribute('href')`)); href != "/runs?lang=zh" {
		t.Errorf("nav link %q loses ?lang=zh", href)
	}
}

// testFillRuleMatchesGo runs the page's fillGaps and webassets.Gaps on the
// same columns (a sampling gap, an OOM, PSS read every 5 s) and compares.
func testFillRuleMatchesGo(t *testing.T, ctx context.Context) {
	t.Helper()
	x := []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 30, 31, 32}
	v := func(f float64) *float64 { return &f }
	cg := []*float64{v(1), v(2), v(3), v(4), v(5), v(6), v(7), v(8), v(9), v(10), v(11), v(12), v(13), v(14), v(15)}
	pss := []*float64{v(1), nil, nil, nil, nil, v(2), nil, nil, nil, nil, nil, nil, v(3), nil, nil}
	breaks := []float64{7.5}
	nx, cols := webassets.Gaps(x, [][]*float64{cg, pss}, []time.Duration{0, webassets.PSSPeriod}, breaks)
	want, _ := json.Marshal(append([]any{nx}, cols[0], cols[1]))
	in, _ := json.Marshal([]any{x, [][]*float64{cg, pss}, breaks})
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(([x, cols, br]) => JSON.stringify(fillGaps(x, cols, ["cgroup_usage", "pss_total"], br)))(`+string(in)+`)`))
	if err != nil || got != string(want) {
		t.Errorf("page fill rule\n got %s (%v)\nwant %s", got, err, want)
	}
}
