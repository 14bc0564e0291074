package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func snapshotFixture(name string) string { return filepath.Join("testdata", "snapshot", name) }

func snapshotGolden(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile(snapshotFixture(name + ".stats.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, l := range strings.SplitAfter(string(raw), "\n") {
		if !strings.HasPrefix(l, "<frozen runpy>") { // Python's stderr, captured with the golden
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}

func TestSnapshotSummaryMatchesPyTorch(t *testing.T) {
	for _, name := range []string{"oom_huge.pickle", "leak_loss_history.pickle"} {
		want := snapshotGolden(t, name)
		out, errOut, code := runCLI(t, "snapshot", "summary", "--pytorch", snapshotFixture(name))
		if code != 0 || out != want {
			t.Errorf("%s --pytorch: code %d, stderr %q\n--- got\n%s--- want\n%s", name, code, errOut, out, want)
		}
		out, _, code = runCLI(t, "snapshot", "summary", snapshotFixture(name))
		if code != 0 || !strings.HasPrefix(out, want) || !strings.Contains(out, "peak allocated") {
			t.Errorf("%s: code %d, output does not start with PyTorch's stats:\n%s", name, code, out)
		}
	}
	out, _, _ := runCLI(t, "snapshot", "summary", snapshotFixture("oom_huge.pickle.gz"))
	if !strings.Contains(out, "OOM") || !strings.Contains(out, "372.53 GiB requested") {
		t.Errorf("gzip input / OOM line missing:\n%s", out)
	}
}

func TestSnapshotJSONEverywhere(t *testing.T) {
	f := snapshotFixture("leak_loss_history.pickle")
	for _, args := range [][]string{
		{"summary", f}, {"top", f}, {"timeline", f}, {"leaks", f}, {"diff", f, f},
		{"html", f, "-o", filepath.Join(t.TempDir(), "x.html")},
	} {
		out, errOut, code := runCLI(t, append(append([]string{"snapshot"}, args...), "--json")...)
		var v map[string]any
		if code != 0 || json.Unmarshal([]byte(out), &v) != nil {
			t.Errorf("%v --json: code %d, stderr %q, out %.200q", args, code, errOut, out)
		}
	}
}

func TestSnapshotLeaksAndDiff(t *testing.T) {
	out, _, code := runCLI(t, "snapshot", "leaks", snapshotFixture("leak_loss_history.pickle"))
	if code != 0 || !strings.Contains(out, "capture_torch.py:149 leak") || !strings.Contains(out, "512 B") {
		t.Errorf("leaks: code %d\n%s", code, out)
	}
	out, _, code = runCLI(t, "snapshot", "diff", snapshotFixture("eval_inference_mode.pickle"), snapshotFixture("eval_leak_no_grad_missing.pickle"))
	_, rows, _ := strings.Cut(out, "DELTA")
	lines := strings.Split(rows, "\n")
	if code != 0 || len(lines) < 2 || !strings.Contains(lines[1], "capture3.py:21 eval_leak") {
		t.Errorf("diff: code %d\n%s", code, out)
	}
}

func TestSnapshotTimelineOutputs(t *testing.T) {
	f := snapshotFixture("oom_huge.pickle")
	out, _, code := runCLI(t, "snapshot", "timeline", "--width", "10", f)
	if code != 0 || !strings.Contains(out, "!") || !strings.Contains(out, "OOM: requested 372.53 GiB (400000000000 bytes)") {
		t.Errorf("sparkline: code %d\n%s", code, out)
	}
	out, _, code = runCLI(t, "snapshot", "timeline", "--csv", f)
	rows := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(rows) != 4 || !strings.HasPrefix(rows[3], "0,2,") || !strings.Contains(rows[3], ",oom,") {
		t.Errorf("csv: code %d\n%s", code, out)
	}
}

func TestSnapshotErrors(t *testing.T) {
	dir := t.TempDir()
	evil := filepath.Join(dir, "evil.pickle")
	os.WriteFile(evil, []byte("\x80\x04\x95\x0e\x00\x00\x00\x00\x00\x00\x00\x8c\x02os\x8c\x06system\x93."), 0o644)
	_, errOut, code := runCLI(t, "snapshot", "summary", evil)
	if code != 1 || !strings.Contains(errOut, "STACK_GLOBAL") || !strings.Contains(errOut, "offset 23") {
		t.Errorf("refused opcode: code %d, stderr %q", code, errOut)
	}
	_, errOut, code = runCLI(t, "snapshot", "summary", filepath.Join(dir, "missing.pickle"))
	if code != 1 || !strings.Contains(errOut, "missing.pickle") {
		t.Errorf("missing file: code %d, stderr %q", code, errOut)
	}
	_, errOut, code = runCLI(t, "snapshot", "html", snapshotFixture("oom_huge.pickle"))
	if code != 1 || !strings.Contains(errOut, "-o") {
		t.Errorf("html without -o: code %d, stderr %q", code, errOut)
	}
}

func TestSnapshotDecodedSize(t *testing.T) {
	plain, gz := snapshotFixture("oom_huge.pickle"), snapshotFixture("oom_huge.pickle.gz")
	st, _ := os.Stat(gz)
	if got := snapshotDecodedSize(plain, 15448); got != 15448 {
		t.Errorf("plain: %d", got)
	}
	if got := snapshotDecodedSize(gz, st.Size()); got != max(15448, 5*st.Size()) {
		t.Errorf("gzip: %d, want the ISIZE 15448 or 5x the compressed size", got)
	}
}

// The default text timeline fits 80 columns and is the same on every run
// (the legend of annotated scopes once came out in map order).
func TestSnapshotTimelineFits80ColumnsAndIsStable(t *testing.T) {
	f := snapshotFixture("leak_loss_history.pickle")
	first, _, code := runCLI(t, "snapshot", "timeline", f)
	if code != 0 || !strings.Contains(first, "^ = start of") || !strings.Contains(first, "peak allocated") {
		t.Fatalf("code %d\n%s", code, first)
	}
	for _, l := range strings.Split(first, "\n") {
		if n := len([]rune(l)); n > 80 {
			t.Errorf("%d columns: %q", n, l)
		}
	}
	for i := 0; i < 5; i++ {
		if again, _, _ := runCLI(t, "snapshot", "timeline", f); again != first {
			t.Fatalf("output changed between runs:\n%s\n---\n%s", first, again)
		}
	}
}

func TestSnapshotSigned(t *testing.T) {
	for n, want := range map[int64]string{0: "+0 B", 1176 << 20: "+1.15 GiB", -512: "-512 B"} {
		if got := snapshotSigned(n); got != want {
			t.Errorf("snapshotSigned(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestSnapshotShortName(t *testing.T) {
	for in, want := range map[string]string{
		"capture_torch.py:75 train_with_history": "capture_torch.py:75 train_with_history",
		"at::(anonymous namespace)::create_out(c10::ArrayRef<long>, c10::ArrayRef<long>, c10::TensorOptions const&)": "at::(anonymous namespace)::create_out(…)",
		"at::cuda::setWorkspaceForHandle(cublasContext*, c10::cuda::CUDAStream)":                                     "at::cuda::setWorkspaceForHandle(…)",
		"void at::native::k<float, at::f<(int)3>>(at::TensorIterator&) [clone .isra.0] < x.py:1 g":                   "void at::native::k<…>(…) [clone .isra.0] < x.py:1 g",
	} {
		if got := snapshotShortName(in); got != want {
			t.Errorf("snapshotShortName(%q) = %q, want %q", in, got, want)
		}
	}
}

// summary, leaks and diff keep their text within 80 columns on real
// snapshots (OOM lines, free memory, action counts and headers once ran to
// 100 and more).
func TestSnapshotTextFits80Columns(t *testing.T) {
	oom, leak := snapshotFixture("oom_huge.pickle"), snapshotFixture("leak_loss_history.pickle")
	for _, args := range [][]string{
		{"summary", oom}, {"summary", leak}, {"leaks", leak},
		{"diff", snapshotFixture("eval_inference_mode.pickle"), snapshotFixture("eval_leak_no_grad_missing.pickle")},
	} {
		out, _, code := runCLI(t, append([]string{"snapshot"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: code %d", args, code)
		}
		if args[0] == "summary" {
			_, out, _ = strings.Cut(out, "torchmem summary") // PyTorch's own part is byte for byte
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, ".py:") {
				continue // a row of sites is as wide as the sites' names
			}
			if n := len([]rune(strings.TrimRight(l, " "))); n > 80 {
				t.Errorf("%v: %d columns: %q", args, n, l)
			}
		}
	}
}
