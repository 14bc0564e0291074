package snapshot

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// openTrainPage loads the page of the real GPT-2 training snapshot in
// headless Chromium and checks it drew without script errors.
func openTrainPage(t *testing.T, width, height int64) (ctx context.Context) {
	t.Helper()
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	path, _ := writePage(t, loadReal(t, "train_gpt2_bf16.pickle.gz"))
	c := browserContext(t)
	if err := chromedp.Do(c, chromedp.EmulateViewport(width, height)); err != nil {
		t.Fatal(err)
	}
	if errs := loadPage(t, c, path); len(errs) > 0 {
		t.Fatalf("script errors: %v", errs)
	}
	return c
}

func mouse(t *testing.T, ctx context.Context, typ input.DispatchMouseEventType, xy []float64, opts ...chromedp.MouseOption) {
	t.Helper()
	if len(xy) != 2 {
		t.Fatalf("no point to move to: %v", xy)
	}
	if err := chromedp.Do(ctx, chromedp.MouseEvent(typ, xy[0], xy[1], opts...)); err != nil {
		t.Fatal(err)
	}
}

// TestActiveTimelineInChromium: the band timeline draws, hovering the
// largest band alive at the peak shows its size and Python stack,
// clicking pins it and shows the allocator state at that entry.
func TestActiveTimelineInChromium(t *testing.T) {
	ctx := openTrainPage(t, 1400, 1000)
	inked := eval[int](t, ctx, `(() => { const v = torchmemViews[0].active, d = v.ctx.getImageData(78, 8, v.W, v.H).data;
		let n = 0; for (let i = 0; i < d.length; i += 4) if (d[i+3] && (d[i] < 250 || d[i+1] < 250 || d[i+2] < 250)) n++; return n; })()`)
	if inked < 20000 {
		t.Fatalf("active timeline: %d pixels drawn", inked)
	}
	xy := eval[[]float64](t, ctx, `(() => { const v = torchmemViews[0], A = v.allocs, p = v.a.peak;
		let best = -1; for (let i = 0; i < A.n; i++) if (A.start[i] <= p && A.end[i] > p && A.stack[i] >= 0 && (best < 0 || A.size[i] > A.size[best])) best = i;
		window.hoverBand = best; v.active.cv.scrollIntoView(); return v.active.locate(best); })()`)
	mouse(t, ctx, input.DispatchMouseEventTypeMouseMoved, xy)
	tip := eval[string](t, ctx, `document.getElementById("tip").textContent`)
	size := eval[string](t, ctx, `fmtBytes(torchmemViews[0].allocs.size[hoverBand])`)
	if !strings.Contains(tip, "allocation "+size) || !strings.Contains(tip, "site: ") || !strings.Contains(tip, ".py:") ||
		!strings.Contains(tip, "category: ") {
		t.Errorf("hover at %v over a %s band shows %q", xy, size, tip)
	}
	// The largest segment at the peak holds allocations: its hover says so.
	sxy := eval[[]float64](t, ctx, `(() => { const v = torchmemViews[0], S = v.segs, p = v.a.peak;
		let best = -1; for (let i = 0; i < S.n; i++) if (S.start[i] <= p && S.end[i] > p && (best < 0 || S.size[i] > S.size[best])) best = i;
		return v.segView.locate(best, v.segView.columnOf(p)); })()`)
	mouse(t, ctx, input.DispatchMouseEventTypeMouseMoved, sxy)
	if tip := eval[string](t, ctx, `document.getElementById("tip").textContent`); !strings.Contains(tip, "segment ") || !regexp.MustCompile(`\n[1-9]\d* allocations alive in it here`).MatchString(tip) {
		t.Errorf("hover over the largest segment at the peak shows %q", tip)
	}
	mouse(t, ctx, input.DispatchMouseEventTypeMouseMoved, xy)
	mouse(t, ctx, input.DispatchMouseEventTypeMousePressed, xy, chromedp.ButtonLeft, chromedp.ClickCount(1))
	mouse(t, ctx, input.DispatchMouseEventTypeMouseReleased, xy, chromedp.ButtonLeft, chromedp.ClickCount(1))
	if pinned := eval[int](t, ctx, `torchmemViews[0].active.pinned`); pinned != eval[int](t, ctx, `hoverBand`) {
		t.Errorf("click pinned band %d", pinned)
	}
	if txt := eval[string](t, ctx, `document.querySelector("#active .pinned").textContent`); !strings.Contains(txt, ".py:") {
		t.Errorf("pinned panel shows %q", txt)
	}
	// The state rebuilt at the clicked entry holds the pinned allocation.
	state := eval[[]int](t, ctx, `(() => { const v = torchmemViews[0], st = v.stateAt(v.selected);
		return [st.reduce((n, s) => n + s.blocks.length / 5, 0), st.filter(s => s.bands.includes(v.active.pinned)).length]; })()`)
	if state[0] < 100 || state[1] != 1 {
		t.Errorf("allocator state at the selected entry: %d blocks, pinned allocation in %d segments", state[0], state[1])
	}
}

// TestActiveZoomInChromium: the wheel narrows the range around the
// pointer, a drag selects a range, the time filter sets one, and
// double-click goes back to the whole trace.
func TestActiveZoomInChromium(t *testing.T) {
	ctx := openTrainPage(t, 1400, 1000)
	entries := eval[int](t, ctx, `torchmemViews[0].entries`)
	mid := eval[[]float64](t, ctx, `(() => { const cv = torchmemViews[0].active.cv; cv.scrollIntoView(); const r = cv.getBoundingClientRect();
		return [r.left + 78 + torchmemViews[0].active.W / 2, r.top + 100]; })()`)
	for i := 0; i < 3; i++ {
		if err := chromedp.Do(ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseWheel, mid[0], mid[1], wheelUp)); err != nil {
			t.Fatal(err)
		}
	}
	span := eval[[]int](t, ctx, `[torchmemViews[0].v0, torchmemViews[0].v1]`)
	if w := span[1] - span[0]; w > entries*6/10 || w < entries/4 || span[0] > entries/2 || span[1] < entries/2 {
		t.Errorf("after 3 wheel steps in the middle the range is %v of %d entries", span, entries)
	}
	a := []float64{mid[0] - 200, mid[1]}
	mouse(t, ctx, input.DispatchMouseEventTypeMousePressed, a, chromedp.ButtonLeft)
	mouse(t, ctx, input.DispatchMouseEventTypeMouseReleased, []float64{mid[0] - 100, mid[1]}, chromedp.ButtonLeft)
	drag := eval[[]int](t, ctx, `[torchmemViews[0].v0, torchmemViews[0].v1]`)
	if w := drag[1] - drag[0]; w >= span[1]-span[0] || drag[0] < span[0] || w < 10 {
		t.Errorf("drag over 100 px of %v selected %v", span, drag)
	}
	got := eval[[]int](t, ctx, `(() => { const v = torchmemViews[0], q = s => v.host.querySelector(s);
		const a = v.times[5000], b = v.times[8000], lb = x => v.times.findIndex(t => t >= x);
		q(".from").value = a.toFixed(6); q(".to").value = b.toFixed(6); q(".apply").click();
		return [v.v0, v.v1, lb(a), v.times.findLastIndex(t => t <= b + 1e-6) + 1]; })()`)
	if got[0] != got[2] || got[1] != got[3] || got[0] > 5000 || got[1] <= 8000 {
		t.Errorf("time filter from entry 5000's time to entry 8000's: entries [%d, %d), want [%d, %d)", got[0], got[1], got[2], got[3])
	}
	if txt := eval[string](t, ctx, `torchmemViews[0].host.querySelector(".range").textContent`); !strings.HasPrefix(txt, itoa(int64(got[1]-got[0]))+" of ") {
		t.Errorf("range note says %q", txt)
	}
	mouse(t, ctx, input.DispatchMouseEventTypeMousePressed, mid, chromedp.ButtonLeft, chromedp.ClickCount(2))
	mouse(t, ctx, input.DispatchMouseEventTypeMouseReleased, mid, chromedp.ButtonLeft, chromedp.ClickCount(2))
	if whole := eval[[]int](t, ctx, `[torchmemViews[0].v0, torchmemViews[0].v1]`); whole[0] != 0 || whole[1] != entries {
		t.Errorf("double-click: range %v, want the whole trace", whole)
	}
}

// wheelUp scrolls up (zooms in). CDP wants deltaX too, and a 0 would be
// omitted from the message.
func wheelUp(p *input.DispatchMouseEventParams) { p.DeltaX, p.DeltaY = 0.01, -100 }

// TestPeakViewInChromium: what the peak view lists adds up to the peak of
// allocated memory, grouped by stack and category, largest first, each
// with its stack, and the categories add up to the same bytes.
func TestPeakViewInChromium(t *testing.T) {
	ctx := openTrainPage(t, 1400, 1000)
	got := eval[[]float64](t, ctx, `(() => { const r = torchmemViews[0].liveAtPeak();
		return [r.total, D.timelines[0].peak.allocated_bytes, r.groups.length, r.groups[0].bytes, r.groups[r.groups.length-1].bytes]; })()`)
	if got[0] != got[1] || got[2] < 2 || got[3] < got[4] {
		t.Errorf("peak view: %v (total, peak, groups, first, last)", got)
	}
	cats := eval[[]float64](t, ctx, `(() => { const r = torchmemViews[0].liveAtPeak();
		return [r.cats.reduce((n, c) => n + c.bytes, 0), r.cats.length, r.cats.find(c => c.name === "optimizer state")?.bytes ?? 0]; })()`)
	if cats[0] != got[0] || cats[1] < 3 || cats[2] == 0 {
		t.Errorf("categories at the peak: %v (sum, count, optimizer state) for %v bytes", cats, got[0])
	}
	rows := eval[int](t, ctx, `document.querySelectorAll("#peaks table.peak tr").length`)
	head := eval[string](t, ctx, `document.querySelector("#peaks h3").textContent`)
	first := eval[string](t, ctx, `document.querySelector("#peaks table.peak details pre").textContent`)
	if rows != int(got[2])+1 || !strings.Contains(head, "3.06 GiB live at the peak") || !strings.Contains(first, ".py:") {
		t.Errorf("peak table: %d rows for %v groups, heading %q, first stack %q", rows, got[2], head, first)
	}
}

// TestHTMLScreenshot writes the PNG docs/snapshot.md shows when
// TORCHMEM_SCREENSHOT names a file: the training snapshot's band timeline
// with a band of the last step hovered.
//
//	TORCHMEM_SCREENSHOT=$PWD/docs/snapshot-html.png go test -run TestHTMLScreenshot ./internal/snapshot
func TestHTMLScreenshot(t *testing.T) {
	out := os.Getenv("TORCHMEM_SCREENSHOT")
	if out == "" {
		t.Skip("set TORCHMEM_SCREENSHOT to a PNG path to write the page's screenshot")
	}
	ctx := openTrainPage(t, 1100, 760)
	// The largest band with a Python site alive late in the last step, so
	// the tooltip opens to the left of it.
	xy := eval[[]float64](t, ctx, `(() => { const v = torchmemViews[0].active, A = v.bands, c = Math.floor(v.W * 0.86), e = v.col[c];
		let best = -1; for (let i = 0; i < A.n; i++) if (A.start[i] <= e && A.end[i] > e && A.stack[i] >= 0 &&
			D.sites[D.stacks[A.stack[i]][0]].includes(".py:") && (best < 0 || A.size[i] > A.size[best])) best = i;
		document.querySelector("#active h3").scrollIntoView(); return v.locate(best, c); })()`)
	mouse(t, ctx, input.DispatchMouseEventTypeMouseMoved, xy)
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBandViewFormatsInChromium: traces without times (torch 2.0, 2.1)
// label the axis and filter by entry, and a trace that shares entries
// draws; hovering and zooming raise no script errors.
func TestBandViewFormatsInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	ctx := browserContext(t)
	for _, name := range []string{"torch-2.0", "torch-2.1", "shared-entries"} {
		path, _ := writePage(t, loadFormat(t, name))
		if errs := loadPage(t, ctx, path); len(errs) > 0 {
			t.Fatalf("%s: script errors: %v", name, errs)
		}
		if n := eval[int](t, ctx, `D.active.length`); n == 0 {
			t.Fatalf("%s: no band view", name)
		}
		got := eval[string](t, ctx, `(() => { const v = torchmemViews[0], e = v.entries;
			v.applyFilter(String(v.first), String(v.first + Math.max(e - 2, 0))); v.setRange(0, e);
			const r = v.active.cv.getBoundingClientRect(); v.active.at(78 + v.active.W / 2, 8 + v.active.H - 2);
			return (v.times ? "time " : "entries ") + v.label(0) + " " + v.v1 + "/" + e + " " + window.torchmemErrors.join(";"); })()`)
		if name != "shared-entries" && !strings.HasPrefix(got, "entries entry ") || strings.Contains(got, "Error") {
			t.Errorf("%s: %q", name, got)
		}
	}
}
