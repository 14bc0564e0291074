package snapshot

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

func writePage(t *testing.T, s *Snapshot) (string, HTMLStats) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "snap.html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := WriteHTML(f, s, HTMLOptions{Title: "test <snap>"})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return path, st
}

// TestHTMLSelfContained: nothing on the page is fetched from anywhere.
func TestHTMLSelfContained(t *testing.T) {
	var buf bytes.Buffer
	if _, err := WriteHTML(&buf, loadReal(t, "oom_huge.pickle"), HTMLOptions{Title: "</script><b>x"}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:)?//`).MatchString(page) {
		t.Error("page references a network resource")
	}
	if strings.Contains(page, "</script><b>x") || !strings.Contains(page, "uPlot") {
		t.Error("title not escaped or uPlot not inlined")
	}
}

func chromium(t *testing.T) string {
	for _, b := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(b); err == nil {
			return p
		}
	}
	t.Skip("no chromium on this machine: the page is not rendered (install Debian's chromium package)")
	return ""
}

func browserContext(t *testing.T) context.Context {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.NoFirstRun, chromedp.UserDataDir(t.TempDir()),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	// A hang guard, not a speed check: a cold Chromium start on the loaded
	// 2-core CI machine (packages test in parallel) has taken over 60 s.
	ctx, cancel3 := context.WithTimeout(ctx, 180*time.Second)
	t.Cleanup(cancel3)
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

// loadPage opens the page at path, waits until it says it is ready and
// returns the script errors it recorded.
func loadPage(t *testing.T, ctx context.Context, path string) []string {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+path)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`window.torchmemReady === true`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("%s: page never became ready: %v", path, err)
	}
	return eval[[]string](t, ctx, `window.torchmemErrors`)
}

// TestHTMLInChromium loads the page of the real training snapshot in
// headless Chromium: it must draw without script errors, zoom to finer
// data, and show a block's stack on hover.
func TestHTMLInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	path, _ := writePage(t, loadReal(t, "train_gpt2_bf16.pickle.gz"))
	ctx := browserContext(t)
	if errs := loadPage(t, ctx, path); len(errs) > 0 {
		t.Fatalf("script errors: %v", errs)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll(".uplot canvas").length`); n < 1 {
		t.Fatalf("no timeline chart drawn")
	}
	// Zoom into 1% of the trace: the page must switch to a finer level.
	full := eval[int](t, ctx, `torchmemCharts[0].data[0].length`)
	eval[bool](t, ctx, `(() => { const u = torchmemCharts[0], x = u.data[0];
		window.zoomA = x[Math.floor(x.length/2)]; window.zoomB = zoomA + (x[x.length-1] - x[0]) / 100;
		u.setScale("x", {min: zoomA, max: zoomB}); return true; })()`)
	zoomed := eval[int](t, ctx, `torchmemCharts[0].data[0].filter(v => v >= zoomA && v <= zoomB).length`)
	if zoomed < 3*full/100 || full < 1000 {
		t.Errorf("zoom: %d points in the window (full view %d): no finer level loaded", zoomed, full)
	}
	// Hover the first active block that has a stack.
	xy := eval[[]float64](t, ctx, `(() => { const cv = document.getElementById("segmap"), r = cv.getBoundingClientRect();
		cv.scrollIntoView();
		const r2 = cv.getBoundingClientRect();
		const max = Math.max(...D.segments.slice(0, 20000).map(s => s.size)), k = (cv.width - 154) / max;
		for (let i = 0; i < D.segments.length; i++) { const b = D.segments[i].blocks;
			for (let j = 0; j < b.length; j += 5) if (b[j+3] === 0 && b[j+4] >= 0)
				return [r2.left + 150 + (b[j] + b[j+1]/2) * k, r2.top + i*14 + 7]; }
		return [0, 0]; })()`)
	if err := chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, xy[0], xy[1])); err != nil {
		t.Fatal(err)
	}
	tip := eval[string](t, ctx, `document.getElementById("tip").textContent`)
	if !strings.Contains(tip, "site: ") || !strings.Contains(tip, ".py:") {
		t.Errorf("hover at %v shows %q", xy, tip)
	}
}

// TestHTMLLoadTime loads the page named by TORCHMEM_BENCH_HTML (e.g. one
// written for a 1 GB snapshot by bench/snapshot.sh) and logs how long
// Chromium takes until the page has drawn. A measurement, not a check.
func TestHTMLLoadTime(t *testing.T) {
	path := os.Getenv("TORCHMEM_BENCH_HTML")
	if path == "" {
		t.Skip("set TORCHMEM_BENCH_HTML to a page to time its loading")
	}
	ctx := browserContext(t)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+path)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`window.torchmemReady === true`, chromedp.WithPollingTimeout(60*time.Second))); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	inPage := eval[float64](t, ctx, `performance.now()`)
	errs := eval[[]string](t, ctx, `window.torchmemErrors`)
	t.Logf("page ready after %.2f s (performance.now %.0f ms), script errors: %v, timing %s", elapsed.Seconds(), inPage, errs, eval[string](t, ctx, `JSON.stringify(window.torchmemTiming)`))
}

// TestHTMLOldFormatInChromium: a torch 1.13 snapshot (no trace) still
// gives a working page.
func TestHTMLOldFormatInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	path, _ := writePage(t, loadFormat(t, "torch-1.13"))
	ctx := browserContext(t)
	if errs := loadPage(t, ctx, path); len(errs) > 0 {
		t.Fatalf("script errors: %v", errs)
	}
	if txt := eval[string](t, ctx, `document.getElementById("timelines").textContent`); !strings.Contains(txt, "No trace") {
		t.Errorf("timeline section says %q", txt)
	}
}

// TestHTMLRealPagesInChromium renders the other real captures (expandable
// segments, fragmentation, an OOM) without script errors.
func TestHTMLRealPagesInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	ctx := browserContext(t)
	for _, name := range []string{"expandable_segments.pickle", "fragmented.pickle", "oom_huge.pickle", "leak_loss_history.pickle"} {
		path, _ := writePage(t, loadReal(t, name))
		if errs := loadPage(t, ctx, path); len(errs) > 0 {
			t.Errorf("%s: script errors: %v", name, errs)
		}
		if name == "leak_loss_history.pickle" {
			if txt := eval[string](t, ctx, `document.getElementById("leaks").textContent`); !strings.Contains(txt, "capture_torch.py:149 leak") {
				t.Errorf("leak table shows %q", txt)
			}
		}
		rows := eval[int](t, ctx, `D.segments.length`)
		if h := eval[int](t, ctx, `document.getElementById("segmap").height`); h < rows*14 {
			t.Errorf("%s: segment map %d px high for %d segments", name, h, rows)
		}
	}
}

func TestHTMLLeakTable(t *testing.T) {
	var buf bytes.Buffer
	if _, err := WriteHTML(&buf, loadReal(t, "leak_loss_history.pickle"), HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"site":"capture_torch.py:149 leak"`) || !strings.Contains(buf.String(), `"top_peak":[{`) {
		t.Error("page data lacks the leak or the sites at the peak")
	}
}

// TestHTMLSmallerThanPickle: with one band per allocation the page still
// takes fewer bytes than the pickle it shows, for the real captures with
// a trace of some length (a page is about 100 KB of script before data).
func TestHTMLSmallerThanPickle(t *testing.T) {
	for _, name := range []string{"train_gpt2_bf16.pickle.gz", "expandable_segments.pickle", "fragmented.pickle", "leak_loss_history.pickle"} {
		f, err := os.Open(filepath.Join("testdata", "real", name))
		if err != nil {
			t.Fatal(err)
		}
		var r io.Reader = f
		if strings.HasSuffix(name, ".gz") {
			if r, err = gzip.NewReader(f); err != nil {
				t.Fatal(err)
			}
		}
		size, err := io.Copy(io.Discard, r)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		st, err := WriteHTML(io.Discard, loadReal(t, name), HTMLOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if st.Bytes >= size || st.Bands == 0 {
			t.Errorf("%s: page %d bytes (%d allocation bands) for a %d-byte pickle", name, st.Bytes, st.Bands, size)
		}
	}
}

// TestHTMLBandViewOOM: the band view marks the oom entry of a snapshot
// dumped from inside the OOM observer.
func TestHTMLBandViewOOM(t *testing.T) {
	s := loadReal(t, "oom_huge.pickle")
	d := buildPageData(s, HTMLOptions{}.withDefaults())
	if len(d.Active) != 1 || len(d.Active[0].OOMs) != 1 || s.Traces[0][d.Active[0].OOMs[0]].Action != ActionOOM {
		t.Errorf("band views %+v", d.Active)
	}
}
