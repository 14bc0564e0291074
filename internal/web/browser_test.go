package web

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/torchmem/torchmem/internal/store"
	"github.com/torchmem/torchmem/internal/units"
)

// shown is one number on a page: its raw value and its text.
type shown struct {
	V    string `json:"v"`
	Text string `json:"text"`
}

const collectShown = `Object.fromEntries([...document.querySelectorAll('[data-k]')].map(e => [e.dataset.k, {v: e.dataset.v, text: e.textContent}]))`

// browser starts Debian's chromium headless with a fresh profile and no
// background network traffic; it skips when there is none.
func browser(t *testing.T) context.Context {
	t.Helper()
	var path string
	for _, b := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(b); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		t.Skip("no chromium on PATH (Debian package chromium): the dashboard is not tested in a browser")
	}
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1366, 900)}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	// A hang guard, not a speed check: a cold Chromium start on the loaded
	// 2-core CI machine (packages test in parallel) has taken over 60 s.
	ctx, cancelT := context.WithTimeout(ctx, 180*time.Second)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	// Any uncaught script error fails the test: a page can look right and
	// still have thrown on the way.
	var mu sync.Mutex
	var errs []string
	err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*cdpruntime.EventExceptionThrown); ok {
			mu.Lock()
			errs = append(errs, exceptionText(e.ExceptionDetails))
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, e := range errs {
			t.Errorf("script error in the page: %s", e)
		}
	})
	return ctx
}

// artifacts is where screenshots go: $TORCHMEM_TEST_ARTIFACTS, else the
// test's artifact directory (kept with go test -artifacts).
func artifacts(t *testing.T) string {
	if d := os.Getenv("TORCHMEM_TEST_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.ArtifactDir()
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(artifacts(t), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// expect checks that page number k shows value v formatted as the CLI does.
func expect(t *testing.T, page string, got map[string]shown, k string, v int64) {
	t.Helper()
	s, ok := got[k]
	switch {
	case !ok:
		t.Errorf("%s page: no %s shown", page, k)
	case s.V != strconv.FormatInt(v, 10) || s.Text != units.Bytes(v):
		t.Errorf("%s page: %s shows %q (data %s), API says %d (%s)", page, k, s.Text, s.V, v, units.Bytes(v))
	}
}

// TestDashboardInBrowser opens the node, runs and run pages in a real
// browser and checks that the numbers they show are the API's.
func TestDashboardInBrowser(t *testing.T) {
	ctx := browser(t)
	f := newFixture(t, fixtureOpts{})
	var node Node
	f.getJSON(t, "/api/v1/node", &node)

	if err := chromedp.Do(ctx, chromedp.Navigate(f.url+"/")); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector('[data-k="run.`+f.running+`.step"]') !== null && document.querySelector('#live canvas') !== null`)); err != nil {
		t.Fatalf("node page never showed the job and its run: %v", err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]shown](collectShown))
	if err != nil {
		t.Fatal(err)
	}
	m, j := node.Sample.Host.Meminfo, node.Sample.Jobs[0]
	expect(t, "node", got, "host.available", int64(*m.MemAvailableBytes))
	expect(t, "node", got, "host.total", int64(*m.MemTotalBytes))
	for _, d := range node.Sample.GPU.Devices {
		expect(t, "node", got, "gpu."+strconv.Itoa(d.Index)+".used", d.UsedBytes)
		expect(t, "node", got, "gpu."+strconv.Itoa(d.Index)+".total", d.TotalBytes)
		expect(t, "node", got, "gpu."+strconv.Itoa(d.Index)+".reserved", *d.ReservedBytes)
	}
	expect(t, "node", got, "job."+j.ID+".rss", int64(j.Totals.RSSBytes))
	expect(t, "node", got, "job."+j.ID+".pss", int64(j.Totals.PSSBytes))
	expect(t, "node", got, "job."+j.ID+".gpu", j.Totals.GPUBytes)
	expect(t, "node", got, "job."+j.ID+".cgroup_usage", int64(j.Cgroup.UsageBytes))
	for _, p := range j.Processes {
		expect(t, "node", got, "proc."+strconv.Itoa(p.PID)+".rss", int64(*p.RSSBytes))
		expect(t, "node", got, "proc."+strconv.Itoa(p.PID)+".pss", int64(*p.PSSBytes))
	}
	run := node.Runs[0]
	expect(t, "node", got, "run."+run.ID+".allocated", *run.AllocatedBytes)
	expect(t, "node", got, "run."+run.ID+".reserved", *run.ReservedBytes)
	if s := got["run."+run.ID+".step"]; s.Text != strconv.FormatInt(*run.Step, 10) {
		t.Errorf("node page: step %q, API %d", s.Text, *run.Step)
	}
	screenshot(t, ctx, "node.png")

	testRunsPage(t, ctx, f)
	testRunPage(t, ctx, f)
}

func testRunsPage(t *testing.T, ctx context.Context, f *fixture) {
	var list struct{ Runs []store.Run }
	f.getJSON(t, "/api/v1/runs", &list)
	if err := chromedp.Do(ctx, chromedp.Navigate(f.url+"/runs")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelectorAll('tr[data-run]').length === 2`)); err != nil {
		t.Fatalf("runs page never listed 2 runs: %v", err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]shown](collectShown))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list.Runs {
		expect(t, "runs", got, "run."+r.ID+".peak_host", r.Peaks["cgroup_usage"])
	}
	expect(t, "runs", got, "run."+f.running+".peak_gpu", 37<<30) // device peak, not the job's share
	screenshot(t, ctx, "runs.png")
}

func testRunPage(t *testing.T, ctx context.Context, f *fixture) {
	var run store.Run
	f.getJSON(t, "/api/v1/runs/"+f.running, &run)
	if err := chromedp.Do(ctx, chromedp.Navigate(f.url+"/runs/"+f.running)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.body.dataset.ready === "1"`)); err != nil {
		t.Fatalf("run page never got ready: %v", err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]shown](collectShown))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range run.Peaks {
		expect(t, "run", got, "run.peak."+k, v)
	}
	charts, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`[+document.body.dataset.charts, document.querySelectorAll('#charts canvas').length, +document.body.dataset.points, document.querySelectorAll('#events tr[data-kind]').length]`))
	if err != nil {
		t.Fatal(err)
	}
	// Five families (job host memory, host available, GPU, allocator, step), all 600 points, both events.
	if charts[0] != 5 || charts[1] != 5 || charts[2] != 600 || charts[3] != 2 {
		t.Errorf("run page: charts %d, canvases %d, points %d, events %d", charts[0], charts[1], charts[2], charts[3])
	}
	screenshot(t, ctx, "run.png")
	// Zoom: the selected minute is fetched again at full resolution.
	from := fixtureStart.Add(60 * time.Second).UnixMilli()
	js := `loadSamples(` + strconv.FormatInt(from, 10) + `, ` + strconv.FormatInt(from+59_000, 10) + `).then(() => +document.body.dataset.points)`
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](js, chromedp.EvalAwaitPromise))
	if err != nil || n != 60 {
		t.Errorf("zoomed run page: %d points (%v), want 60", n, err)
	}
	screenshot(t, ctx, "run-zoomed.png")
}

func exceptionText(d *cdpruntime.ExceptionDetails) string {
	if d == nil {
		return "?"
	}
	msg := d.Text
	if d.Exception != nil && d.Exception.Description != "" {
		msg += " " + d.Exception.Description
	}
	return msg + " at " + d.URL + ":" + strconv.FormatInt(d.LineNumber, 10)
}
