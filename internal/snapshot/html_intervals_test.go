package snapshot

import (
	"io"
	"testing"
)

// TestIntervalsAddUpToLevels: at every trace entry the allocation
// intervals alive there add up to the replayed allocated level and the
// segment intervals to the reserved level, on every real capture (the
// expandable-segments one maps and unmaps pieces of one segment).
func TestIntervalsAddUpToLevels(t *testing.T) {
	for _, name := range []string{"train_gpt2_bf16.pickle.gz", "expandable_segments.pickle", "fragmented.pickle",
		"oom_huge.pickle", "leak_loss_history.pickle", "grad_accum_4.pickle", "eval_leak_no_grad_missing.pickle"} {
		s := loadReal(t, name)
		for dev := range s.Traces {
			n := len(s.Traces[dev])
			if n == 0 {
				continue
			}
			tl := BuildTimeline(s, dev)
			allocs, segs := s.allocIntervals(dev, 0, n), s.segmentIntervals(dev)
			for _, l := range append([]Level{tl.Start}, tl.Levels()...) {
				if a := liveBytes(allocs, l.Index); a != l.Allocated {
					t.Fatalf("%s device %d entry %d: allocations add up to %d, level %d", name, dev, l.Index, a, l.Allocated)
				}
				if r := liveBytes(segs, l.Index); r != l.Reserved {
					t.Fatalf("%s device %d entry %d: segments add up to %d, level %d", name, dev, l.Index, r, l.Reserved)
				}
			}
		}
	}
}

func liveBytes(ivs []interval, i int) int64 {
	var n int64
	for _, iv := range ivs {
		if iv.start <= i && i < iv.end {
			n += iv.size
		}
	}
	return n
}

// TestIntervalsWindow: a window keeps exactly the intervals alive in it.
func TestIntervalsWindow(t *testing.T) {
	s := loadReal(t, "train_gpt2_bf16.pickle.gz")
	n := len(s.Traces[0])
	all, win := s.allocIntervals(0, 0, n), s.allocIntervals(0, 5000, 6000)
	want := 0
	for _, iv := range all {
		if iv.end > 5000 && iv.start < 6000 {
			want++
		}
	}
	if len(win) != want || want == 0 {
		t.Errorf("window holds %d intervals, want %d", len(win), want)
	}
	for _, i := range []int{5000, 5500, 5999} {
		if liveBytes(win, i) != liveBytes(all, i) {
			t.Errorf("entry %d: window %d bytes, whole trace %d", i, liveBytes(win, i), liveBytes(all, i))
		}
	}
}

// BenchmarkWriteHTMLTrain: the page of the real GPT-2 snapshot, decoded
// once (intervals, categories, stacks, levels and the JSON).
func BenchmarkWriteHTMLTrain(b *testing.B) {
	s := loadReal(b, "train_gpt2_bf16.pickle.gz")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := WriteHTML(io.Discard, s, HTMLOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPageIntervals: the allocation and segment intervals alone.
func BenchmarkPageIntervals(b *testing.B) {
	s := loadReal(b, "train_gpt2_bf16.pickle.gz")
	n := len(s.Traces[0])
	b.ReportAllocs()
	for b.Loop() {
		_ = s.allocIntervals(0, 0, n)
		_ = s.segmentIntervals(0)
	}
}
