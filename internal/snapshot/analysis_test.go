package snapshot

import (
	"testing"
)

// TestLeakNoGradMissing: 30 evaluation batches kept with their graphs
// (1.19 GB alive) against the same loop under inference_mode (121 MB).
func TestLeakNoGradMissing(t *testing.T) {
	leak := FindLeaks(loadReal(t, "eval_leak_no_grad_missing.pickle"), LeakOptions{})
	if len(leak.Leaks) == 0 {
		t.Fatal("no leak found")
	}
	top := leak.Leaks[0]
	if top.Key != "capture3.py:21 eval_leak" || top.Steps != 30 || top.Bytes < 1_000_000_000 {
		t.Errorf("top leak %+v", top)
	}
	var total int64
	for _, l := range leak.Leaks {
		total += l.Bytes
	}
	twin := FindLeaks(loadReal(t, "eval_inference_mode.pickle"), LeakOptions{})
	var twinTotal int64
	for _, l := range twin.Leaks {
		twinTotal += l.Bytes
	}
	if total < 1_000_000_000 || twinTotal > 130_000_000 || total < 100*twinTotal {
		t.Errorf("leak %d bytes, inference-mode twin %d bytes", total, twinTotal)
	}
}

// TestLeakLossHistory: one 512-byte loss tensor kept per step for 40 steps.
func TestLeakLossHistory(t *testing.T) {
	leak := FindLeaks(loadReal(t, "leak_loss_history.pickle"), LeakOptions{})
	if len(leak.Leaks) != 1 || leak.StepSource != "annotation Optimizer.step#SGD.step" {
		t.Fatalf("leaks %+v", leak)
	}
	l := leak.Leaks[0]
	if l.Key != "capture_torch.py:149 leak" || l.Count != 40 || l.Steps != 40 || l.BytesPerStep != 512 {
		t.Errorf("leak %+v", l)
	}
}

func TestNoLeakInTraining(t *testing.T) {
	for _, f := range []string{"train_gpt2_bf16.pickle.gz", "grad_accum_4.pickle", "oom_huge.pickle"} {
		if l := FindLeaks(loadReal(t, f), LeakOptions{}); len(l.Leaks) != 0 {
			t.Errorf("%s: false leaks %+v", f, l.Leaks)
		}
	}
}

func TestSummaryFigures(t *testing.T) {
	s := Summarize(loadReal(t, "oom_huge.pickle"))
	d := s.Devices[0]
	if d.Reserved != d.Allocated+d.FreeExternal || d.Requested+d.FreeInternal != d.Allocated {
		t.Errorf("figures do not add up: %+v", d)
	}
	tr := s.Traces[0]
	if len(tr.OOMs) != 1 || tr.OOMs[0].Requested != 400_000_000_000 || tr.OOMs[0].DeviceFree != 147061866496 {
		t.Errorf("oom %+v", tr.OOMs)
	}
	if s.AllocatorSettings["expandable_segments"] != false {
		t.Errorf("settings %v", s.AllocatorSettings)
	}
	train := Summarize(loadReal(t, "train_gpt2_bf16.pickle.gz")).Traces[0]
	if train.Entries != 17575 || train.Start.Allocated != 0 || train.PeakAlloc.Index != 5780 ||
		train.PeakAlloc.Allocated != 3281713864 || train.LastUS-train.FirstUS != 2380706 {
		t.Errorf("train trace %+v", train)
	}
	exp := Summarize(loadReal(t, "expandable_segments.pickle"))
	if exp.Devices[0].Expandable != 2 || exp.Traces[0].Actions["segment_map"] != 64 {
		t.Errorf("expandable %+v %+v", exp.Devices[0], exp.Traces[0].Actions)
	}
}

// TestLiveAtPeakAddsUp: the allocations alive at the peak sum to the
// replayed level when the trace covers the whole run.
func TestLiveAtPeakAddsUp(t *testing.T) {
	s := loadReal(t, "train_gpt2_bf16.pickle.gz")
	top := TopSites(s, 1)
	p := top.AtPeak[0]
	if p.Total != p.Peak.Allocated {
		t.Errorf("sites at peak hold %d bytes, replay says %d", p.Total, p.Peak.Allocated)
	}
	if p.Sites[0].Key != "capture_torch.py:75 train_with_history" {
		t.Errorf("top site at peak %+v", p.Sites[0])
	}
	deep := TopSites(s, 3)
	if len(deep.AtSnapshot[0].Sites[0].Frames) < 2 {
		t.Errorf("--depth 3 gave %+v", deep.AtSnapshot[0].Sites[0])
	}
}

func TestDiffLeakVsTwin(t *testing.T) {
	d := Compare(loadReal(t, "eval_inference_mode.pickle"), loadReal(t, "eval_leak_no_grad_missing.pickle"), 1)
	g := d.Sites[0]
	if g.Site != "capture3.py:21 eval_leak" || g.DeltaBytes < 1_000_000_000 || g.AfterCount != 152 {
		t.Errorf("largest growth %+v", g)
	}
	if same := Compare(loadReal(t, "oom_huge.pickle"), loadReal(t, "oom_huge.pickle"), 1); same.Sites[0].DeltaBytes != 0 {
		t.Errorf("a snapshot differs from itself: %+v", same.Sites[0])
	}
}

func TestTimelineMarkersAndBuckets(t *testing.T) {
	tl := BuildTimeline(loadReal(t, "oom_huge.pickle"), 0)
	if len(tl.Markers) != 1 || tl.Markers[0].Kind != "oom" || tl.Markers[0].Index != 2 {
		t.Errorf("markers %+v", tl.Markers)
	}
	tr := BuildTimeline(loadReal(t, "train_gpt2_bf16.pickle.gz"), 0)
	ann := 0
	for _, m := range tr.Markers {
		if m.Kind == "annotation" {
			ann++
		}
	}
	if ann == 0 {
		t.Errorf("no annotation markers")
	}
	bs := tr.Buckets(0, tr.Entries, 100)
	var peak int64
	for _, b := range bs {
		peak = max(peak, b.MaxAllocated)
	}
	if len(bs) > 100 || peak != tr.Peak.Allocated || bs[len(bs)-1].Last != tr.Entries-1 {
		t.Errorf("%d buckets, peak %d want %d", len(bs), peak, tr.Peak.Allocated)
	}
}

// TestOnePeakRule: when nothing in the trace goes above the memory held
// before it (a ring buffer that starts at the top), top, summary and the
// timeline all name the start level as the peak.
func TestOnePeakRule(t *testing.T) {
	s := &Snapshot{
		Segments: []Segment{{Device: 0, TotalSize: 4 << 20, Blocks: []Block{{Requested: 1 << 20, State: StateActiveAllocated}}}},
		Traces: [][]TraceEntry{{
			{Action: ActionFreeCompleted, Size: 1 << 20},
			{Action: ActionAlloc, Size: 1 << 20},
		}},
	}
	top, sum, tl := s.Peak(0), s.traceSummary(0).PeakAlloc, BuildTimeline(s, 0).Peak
	if top.Index != -1 || sum.Index != -1 || tl.Index != -1 || top.Allocated != 1<<20 {
		t.Errorf("peaks: top %+v, summary %+v, timeline %+v; want the start level (index -1, 1 MiB) for all", top, sum, tl)
	}
}
