package textwrap

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/torchmem/torchmem/internal/i18n"
)

func TestWrap(t *testing.T) {
	text := "the caching allocator reaches the budget and frees its cache to go on — reserved memory grows with the job until the GPU is full"
	got := Wrap("note: ", text, 40)
	lines := strings.Split(got, "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "note: the") {
		t.Fatalf("wrapped:\n%s", got)
	}
	for _, l := range lines {
		if utf8.RuneCountInString(l) > 40 {
			t.Errorf("%d columns: %q", utf8.RuneCountInString(l), l)
		}
	}
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "      ") || strings.HasPrefix(l, "       ") {
			t.Errorf("continuation not indented under the text: %q", l)
		}
	}
	if strings.Join(strings.Fields(got), " ") != "note: "+text {
		t.Errorf("words lost or changed:\n%s", got)
	}
	if long := Wrap("", strings.Repeat("x", 50)+" y", 40); long != strings.Repeat("x", 50)+"\ny" {
		t.Errorf("a word longer than a line: %q", long)
	}
}

func TestWrapExact(t *testing.T) {
	got := Wrap("  why: ", "aaaa bbbb — cccc dddddddddddddddddddd e", 20)
	want := "  why: aaaa bbbb —\n       cccc\n       dddddddddddddddddddd\n       e"
	if got != want {
		t.Errorf("Wrap =\n%s\nwant\n%s", got, want)
	}
}

func TestCut(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"python3 train.py", 0, "python3 train.py"},
		{"python3 train.py", 16, "python3 train.py"},
		{"python3 train.py", 8, "python3…"},
		{"ünïcödé", 4, "ünï…"},
	} {
		if got := Cut(c.in, c.n); got != c.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

// Chinese prose has no spaces: it breaks between characters, each taking
// two columns, and no line starts with a closing mark. The sentence is
// oomexplain's zh text of a fragmentation verdict.
func TestWrapCJK(t *testing.T) {
	text := "PyTorch 有 12.00 GiB 已预留但未分配 (reserved but unallocated) 的显存，足够本次 2.00 GiB 的申请，但不是一整块连续空间；缓存出现了显存碎片 (fragmentation)。"
	for _, width := range []int{20, 33, 40, 80} {
		got := Wrap("  原因：", text, width)
		lines := strings.Split(got, "\n")
		for i, l := range lines {
			if w := i18n.Width(l); w > width && !strings.Contains(l, "unallocated") && !strings.Contains(l, "(fragmentation)") {
				t.Errorf("width %d: line %d takes %d columns: %q", width, i, w, l)
			}
			if i > 0 {
				if !strings.HasPrefix(l, strings.Repeat(" ", 8)) || strings.HasPrefix(l, strings.Repeat(" ", 9)) {
					t.Errorf("width %d: continuation not under the text (8 columns): %q", width, l)
				}
				if r, _ := utf8.DecodeRuneInString(strings.TrimLeft(l, " ")); strings.ContainsRune("，。；）", r) {
					t.Errorf("width %d: line starts with closing punctuation: %q", width, l)
				}
			}
		}
		// Nothing lost: the text comes back once the breaks are undone.
		joined := strings.TrimPrefix(strings.ReplaceAll(got, "\n"+strings.Repeat(" ", 8), ""), "  原因：")
		if strings.ReplaceAll(joined, " ", "") != strings.ReplaceAll(text, " ", "") {
			t.Errorf("width %d: text changed:\n%s", width, got)
		}
	}
	if got := Wrap("", "显存不足", 4); got != "显存\n不足" {
		t.Errorf("Wrap(显存不足, 4) = %q", got)
	}
	if got := Wrap("", "甲乙丙，丁", 6); got != "甲乙\n丙，丁" {
		t.Errorf("a comma may not start a line: %q", got)
	}
	if got := Wrap("", "设置 PYTORCH_CUDA_ALLOC_CONF 变量", 12); !strings.Contains(got, "\nPYTORCH_CUDA_ALLOC_CONF\n") {
		t.Errorf("an English term stays whole on its own line: %q", got)
	}
}

func TestCutCJK(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"显存不足", 8, "显存不足"},
		{"显存不足", 7, "显存不…"},
		{"显存不足", 6, "显存…"}, // 显存不 would be 6 columns plus the ellipsis
		{"a显存", 4, "a显…"},
		{"显存", 0, "显存"},
	} {
		got := Cut(c.in, c.n)
		if got != c.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
		if c.n > 0 && i18n.Width(got) > c.n {
			t.Errorf("Cut(%q, %d) takes %d columns", c.in, c.n, i18n.Width(got))
		}
	}
}

// TestWrapKeepsSizes: a size's unit is never put at the start of a line
// apart from its number ("998.00\nMiB" read as two things).
func TestWrapKeepsSizes(t *testing.T) {
	got := Wrap("", "the training steps need 998.00 MiB, in nvidia-smi", 30)
	want := "the training steps need\n998.00 MiB, in nvidia-smi"
	if got != want {
		t.Errorf("Wrap =\n%s\nwant\n%s", got, want)
	}
	// a unit word without a number before it breaks as any word
	if got := Wrap("", "aaaa MiB", 5); got != "aaaa\nMiB" {
		t.Errorf("Wrap = %q", got)
	}
}
