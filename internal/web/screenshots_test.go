package web

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestScreenshots writes the docs' screenshots (docs/screenshots/*.png) of
// a real `torchmem serve` and real reports; scripts/screenshots.sh records
// the runs, starts serve and sets the variables. Without
// TORCHMEM_SCREENSHOTS (the output directory) it is skipped.
//
//	TORCHMEM_SCREENSHOT_URL        serve's base URL (node, runs, run pages)
//	TORCHMEM_SCREENSHOT_PAGES      which to take: node,runs,run,report,cluster
//	TORCHMEM_SCREENSHOT_RUN_EN/ZH  the run shown in each language
//	TORCHMEM_SCREENSHOT_REPORT_EN/ZH  `torchmem report -o` files
//
// The cluster page is served from the summary recorded from a real
// Prometheus (testdata, as TestClusterPageInBrowser), with no agent needed.
func TestScreenshots(t *testing.T) {
	out := os.Getenv("TORCHMEM_SCREENSHOTS")
	if out == "" {
		t.Skip("TORCHMEM_SCREENSHOTS not set: run scripts/screenshots.sh")
	}
	pages := os.Getenv("TORCHMEM_SCREENSHOT_PAGES")
	base := strings.TrimRight(os.Getenv("TORCHMEM_SCREENSHOT_URL"), "/")
	for _, lang := range []string{"en", "zh"} {
		run := os.Getenv("TORCHMEM_SCREENSHOT_RUN_" + strings.ToUpper(lang))
		shots := []struct{ page, url, ready string }{
			{"node", base + "/?lang=" + lang, `typeof live !== "undefined" && live.t.length >= 20 && document.querySelector('#jobs .job, #jobs p') !== null`},
			{"runs", base + "/runs?lang=" + lang, `document.querySelector('#runs table, #runs p') !== null`},
			{"run", base + "/runs/" + run + "?lang=" + lang, `document.body.dataset.ready === "1"`},
			{"report", "file://" + os.Getenv("TORCHMEM_SCREENSHOT_REPORT_"+strings.ToUpper(lang)), `document.body.dataset.charts !== undefined`},
		}
		for _, s := range shots {
			if strings.Contains(pages, s.page) {
				shoot(t, filepath.Join(out, s.page+"-"+lang+".png"), s.url, s.ready)
			}
		}
		if strings.Contains(pages, "cluster") {
			f := newFixture(t, fixtureOpts{samples: 5, cluster: &fakeCluster{sum: recordedCluster(t)}})
			shoot(t, filepath.Join(out, "cluster-"+lang+".png"), f.url+"/cluster?lang="+lang, `document.getElementById("nodes").dataset.loaded === "1"`)
		}
	}
}

// shoot opens url in a fresh headless chromium (1280×1400, the first
// screen of the page: docs images stay under 300 KB), waits for ready and
// writes the PNG.
func shoot(t *testing.T, path, url, ready string) {
	t.Helper()
	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 1400), chromedp.Navigate(url)); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](ready)); err != nil {
		t.Fatalf("%s never got ready (%s): %v", url, ready, err)
	}
	time.Sleep(500 * time.Millisecond) // the charts' last paint
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d KB", path, len(png)/1024)
}
