package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/i18n"
)

// Every id of the snapshot commands' catalog has its Chinese.
func TestSnapshotCatalogComplete(t *testing.T) {
	if m := snapshotCatalog.Missing(); len(m) > 0 {
		t.Errorf("snapshot catalog: missing translations %v", m)
	}
}

// The snapshot commands in Chinese on the real captures of testdata/snapshot
// (-update-snapshot rewrites the goldens). PyTorch's own stats, the names
// of the trace's actions and of the categories stay as PyTorch and --json
// write them.
func TestSnapshotGoldenZH(t *testing.T) {
	for _, c := range []struct {
		golden string
		args   []string
	}{
		{"summary-leak-zh.txt", []string{"summary", snapshotFixture("leak_loss_history.pickle")}},
		{"summary-oom-zh.txt", []string{"summary", snapshotFixture("oom_huge.pickle")}},
		{"top-grad-accum-category-zh.txt", []string{"top", "--group-by", "category", snapshotFixture("grad_accum_4.pickle")}},
		{"timeline-leak-zh.txt", []string{"timeline", "--width", "40", snapshotFixture("leak_loss_history.pickle")}},
		{"leaks-leak-zh.txt", []string{"leaks", snapshotFixture("leak_loss_history.pickle")}},
		{"diff-zh.txt", []string{"diff", "-n", "5", snapshotFixture("grad_accum_4.pickle"), snapshotFixture("leak_loss_history.pickle")}},
	} {
		out, errOut, code := runCLI(t, append([]string{"--lang", "zh", "snapshot"}, c.args...)...)
		if code != 0 {
			t.Fatalf("%v: code %d, %s", c.args, code, errOut)
		}
		path := filepath.Join("testdata", "snapshot", "golden", c.golden)
		if *snapshotUpdate {
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
		en, _, _ := runCLI(t, append([]string{"snapshot"}, c.args...)...)
		if strings.Count(out, "\n") != strings.Count(en, "\n") {
			t.Errorf("%v: %d lines in zh, %d in en", c.args, strings.Count(out, "\n"), strings.Count(en, "\n"))
		}
	}
}

// The summary's tables line up by display width in Chinese: in each block
// of rows the values start at one column, though the labels mix CJK
// characters (two columns each) and ASCII.
func TestSnapshotSummaryZHAligned(t *testing.T) {
	out, _, _ := runCLI(t, "--lang", "zh", "snapshot", "summary", snapshotFixture("leak_loss_history.pickle"))
	_, ours, _ := strings.Cut(out, "torchmem 摘要")
	col := -1
	for _, l := range strings.Split(ours, "\n") {
		if !strings.HasPrefix(l, "  ") || strings.HasPrefix(l, "  （") || strings.Contains(l, "=") {
			col = -1 // a heading or a note ends the block
			continue
		}
		// The value starts after the label and its run of two or more spaces.
		i := strings.Index(l[2:], "  ")
		if i < 0 {
			continue
		}
		j := 2 + i
		for j < len(l) && l[j] == ' ' {
			j++
		}
		c := i18n.Width(l[:j])
		if col >= 0 && c != col {
			t.Errorf("value at column %d, the block's others at %d: %q", c, col, l)
		}
		col = c
	}
}
