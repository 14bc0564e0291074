package cli

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var snapshotUpdate = flag.Bool("update-snapshot", false, "rewrite testdata/snapshot/golden from the current output")

// TestSnapshotTopGolden pins the text of top's groupings, the breakdown by
// category and phase and --at on real captures (-update-snapshot rewrites).
func TestSnapshotTopGolden(t *testing.T) {
	for _, c := range []struct {
		golden string
		args   []string
	}{
		{"top-grad-accum-category.txt", []string{"--group-by", "category", snapshotFixture("grad_accum_4.pickle")}},
		{"top-eval-leak-library.txt", []string{"--group-by", "library", snapshotFixture("eval_leak_no_grad_missing.pickle")}},
		{"top-grad-accum-module-at.txt", []string{"--group-by", "module", "--at", "entry 100", snapshotFixture("grad_accum_4.pickle")}},
	} {
		out, errOut, code := runCLI(t, append([]string{"snapshot", "top"}, c.args...)...)
		if code != 0 {
			t.Fatalf("%v: code %d, %s", c.args, code, errOut)
		}
		path := filepath.Join("testdata", "snapshot", "golden", c.golden)
		if *snapshotUpdate {
			_ = os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if out != string(want) {
			t.Errorf("%s changed:\n--- got\n%s--- want\n%s", c.golden, out, want)
		}
	}
}

func TestSnapshotTopFlagErrors(t *testing.T) {
	f := snapshotFixture("grad_accum_4.pickle")
	for _, args := range [][]string{{"--group-by", "frame", f}, {"--at", "yesterday", f}} {
		if _, errOut, code := runCLI(t, append([]string{"snapshot", "top"}, args...)...); code == 0 || errOut == "" {
			t.Errorf("%v: code %d, stderr %q", args, code, errOut)
		}
	}
}

// The default timeline fits the terminal: $COLUMNS when set.
func TestSnapshotTimelineFitsColumns(t *testing.T) {
	t.Setenv("COLUMNS", "120")
	out, _, code := runCLI(t, "snapshot", "timeline", snapshotFixture("leak_loss_history.pickle"))
	if code != 0 {
		t.Fatalf("code %d", code)
	}
	for _, l := range strings.Split(out, "\n") {
		if n := len([]rune(l)); strings.HasPrefix(l, "  allocated ") && (n > 120 || n < 100) {
			t.Errorf("%d columns, want 100-120 (whole buckets): %q", n, l)
		}
	}
	if snapshotSparklineWidth(80) != 68 || snapshotSparklineWidth(10) != 8 {
		t.Errorf("widths %d %d", snapshotSparklineWidth(80), snapshotSparklineWidth(10))
	}
}
