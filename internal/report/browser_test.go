package report

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/text/language"

	"github.com/torchmem/torchmem/internal/i18n"
)

func chromium(t *testing.T) string {
	for _, b := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(b); err == nil && !testing.Short() {
			return p
		}
	}
	t.Skip("no chromium to render the report")
	return ""
}

// openReport writes d's report in lang and opens it in a real headless
// chromium with the network off.
func openReport(t *testing.T, d *Data, lang language.Tag) context.Context {
	browser := chromium(t)
	path := filepath.Join(t.TempDir(), "r.html")
	f, _ := os.Create(path)
	if err := WriteHTML(f, d, lang); err != nil {
		t.Fatal(err)
	}
	f.Close()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox,
		chromedp.Flag("proxy-server", "127.0.0.1:9"), chromedp.Flag("headless", true), chromedp.Env("TZ=UTC"))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	// A hang guard, not a speed check: a cold Chromium start on the loaded
	// 2-core CI machine (packages test in parallel) has taken over 60 s.
	ctx, cancel = context.WithTimeout(ctx, 180*time.Second)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+path), chromedp.WaitReady("body")); err != nil {
		t.Fatal(err)
	}
	return ctx
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// TestHTMLRendersInBrowser: every chart drew a canvas.
func TestHTMLRendersInBrowser(t *testing.T) {
	ctx := openReport(t, testData(), i18n.EN)
	charts := eval[string](t, ctx, `document.body.dataset.charts || ""`)
	canvases := eval[int](t, ctx, `document.querySelectorAll('#charts canvas').length`)
	if charts != "5" || canvases != 5 { // testData: host, available, GPU, step peaks, step time
		t.Fatalf("charts %q canvases %d, want 5", charts, canvases)
	}
}

// gapData is testData with PSS read every 5th sample and the cgroup OOM
// at 2.9 s (a break: PSS is not carried past it).
func gapData() *Data {
	d := testData()
	for i := range d.Samples {
		if i%5 == 0 && i < 29 {
			v := int64(i) * 9 << 20
			d.Samples[i].PSSTotal = &v
		}
	}
	d.Run.Peaks["pss_total"] = 300 << 20
	return d
}

// TestChartsInBrowser: the legends list the markers drawn, a missing
// sample is not bridged (the null reaches uPlot, spanGaps off), PSS is
// stepped, the time axis is 24-hour on whole seconds, and the PSS note
// is there when PSS peaks above cgroup usage.
func TestChartsInBrowser(t *testing.T) {
	ctx := openReport(t, gapData(), i18n.EN)
	host := `document.querySelector('#charts .chart').uplot`
	if kinds := eval[string](t, ctx, `document.querySelector('#charts .chart .marks').dataset.kinds`); kinds != "limit,cgroup_oom" {
		t.Errorf("host chart legend kinds %q", kinds)
	}
	if legend := eval[string](t, ctx, `document.querySelector('#charts .chart .marks').textContent`); legend != "Markers: limit (memory.max)cgroup OOM" {
		t.Errorf("legend %q", legend)
	}
	labels := eval[[]string](t, ctx, host+`.series.map(s => s.label)`)
	if strings.Join(labels, "|") != "Time|cgroup usage (memory.current)|PSS (smaps_rollup)" {
		t.Errorf("series labels %q", labels)
	}
	// The row at the OOM (2.9 s) is null in every series and nothing
	// spans it; PSS after the OOM is not carried.
	row := eval[int](t, ctx, host+`.data[0].indexOf(`+host+`.data[0].find(x => Math.abs(x - (Date.UTC(2026,10,29,12,0,2,900)/1000)) < 1e-6))`)
	if row < 0 {
		t.Fatal("no row at the OOM")
	}
	if nulls := eval[bool](t, ctx, host+`.data.slice(1).every(c => c[`+itoa(row)+`] === null)`); !nulls {
		t.Error("the OOM row is not null in every series")
	}
	if span := eval[bool](t, ctx, host+`.series.slice(1).some(s => s.spanGaps)`); span {
		t.Error("a series spans gaps")
	}
	if after := eval[bool](t, ctx, host+`.data[2][`+itoa(row+1)+`] === null`); !after {
		t.Error("PSS carried across the OOM")
	}
	if carried := eval[bool](t, ctx, host+`.data[2][1] === `+host+`.data[2][0]`); !carried {
		t.Error("PSS not carried between reads")
	}
	ticks := eval[[]string](t, ctx, host+`.axes[0]._values || []`)
	if len(ticks) < 2 || !strings.Contains(ticks[0], "12:00:00\n2026-11-29") {
		t.Errorf("time ticks %q", ticks)
	}
	for _, v := range ticks {
		if strings.ContainsAny(v, "APM") || strings.Contains(v, ".") {
			t.Errorf("tick %q is not whole-second 24-hour", v)
		}
	}
	if note := eval[string](t, ctx, `(document.querySelector('#charts .chart .note') || {}).textContent || ""`); !strings.HasPrefix(note, "PSS is above cgroup usage") {
		t.Errorf("note %q", note)
	}
}

// TestReportZHInBrowser: the zh page has its headings, legends and series
// in Chinese.
func TestReportZHInBrowser(t *testing.T) {
	ctx := openReport(t, gapData(), i18n.ZH)
	text := eval[string](t, ctx, `document.body.innerText`)
	for _, want := range []string{"事后分析", "内存随时间变化", "任务主机内存", "标记：", "上限 (memory.max)", "cgroup 用量 (memory.current)", "PSS 高于 cgroup 用量", "峰值", "事件", "时间"} {
		if !strings.Contains(text, want) {
			t.Errorf("zh report lacks %q", want)
		}
	}
	for _, bad := range []string{"Memory over time", "Markers:", "Post-mortem", "Job host memory"} {
		if strings.Contains(text, bad) {
			t.Errorf("zh report has %q", bad)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
