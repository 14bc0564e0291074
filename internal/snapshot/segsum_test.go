package snapshot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// realSnapshots are the torch 2.11 captures in testdata/real.
var realSnapshots = []string{
	"eval_inference_mode.pickle", "eval_leak_no_grad_missing.pickle",
	"expandable_segments.pickle", "fragmented.pickle", "grad_accum_4.pickle",
	"leak_loss_history.pickle", "oom_huge.pickle", "stacks_all_small.pickle",
	"train_gpt2_bf16.pickle.gz",
}

func loadReal(t testing.TB, name string) *Snapshot {
	t.Helper()
	s, err := ReadFile(filepath.Join("testdata", "real", name), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestMemoryVizStatsGolden compares with what PyTorch's own
// `python -m torch.cuda._memory_viz stats` printed for the same files. The
// goldens also hold a RuntimeWarning Python wrote to stderr; it is dropped.
func TestMemoryVizStatsGolden(t *testing.T) {
	goldens, _ := filepath.Glob("testdata/memory_viz_stats/*.stats.txt")
	if len(goldens) != 6 {
		t.Fatalf("found %d goldens, want 6", len(goldens))
	}
	for _, g := range goldens {
		name := strings.TrimSuffix(filepath.Base(g), ".stats.txt")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(g)
			if err != nil {
				t.Fatal(err)
			}
			want := stripPythonWarnings(string(raw))
			file := name
			if _, err := os.Stat(filepath.Join("testdata", "real", file)); err != nil {
				file += ".gz"
			}
			got := MemoryVizStats(loadReal(t, file))
			if got != want {
				t.Errorf("mismatch\n--- got\n%s\n--- want\n%s", got, want)
			}
		})
	}
}

func stripPythonWarnings(s string) string {
	var keep []string
	for _, l := range strings.SplitAfter(s, "\n") {
		if strings.HasPrefix(l, "<frozen runpy>") {
			continue
		}
		keep = append(keep, l)
	}
	return strings.Join(keep, "")
}
