package report

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/torchmem/torchmem/internal/i18n"
)

// TestHTMLRendersInBrowser opens the report in a real headless chromium
// with the network off and checks that every chart drew a canvas.
func TestHTMLRendersInBrowser(t *testing.T) {
	var browser string
	for _, b := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(b); err == nil {
			browser = p
			break
		}
	}
	if browser == "" || testing.Short() {
		t.Skip("no chromium to render the report")
	}
	path := filepath.Join(t.TempDir(), "r.html")
	f, _ := os.Create(path)
	if err := WriteHTML(f, testData(), i18n.EN); err != nil {
		t.Fatal(err)
	}
	f.Close()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox,
		chromedp.Flag("proxy-server", "127.0.0.1:9"), chromedp.Flag("headless", true))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+path), chromedp.WaitReady("body")); err != nil {
		t.Fatal(err)
	}
	charts, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.dataset.charts || ""`))
	if err != nil {
		t.Fatal(err)
	}
	canvases, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#charts canvas').length`))
	if err != nil {
		t.Fatal(err)
	}
	if charts != "5" || canvases != 5 { // testData: host, available, GPU, step peaks, step time
		t.Fatalf("charts %q canvases %d, want 5", charts, canvases)
	}
}
