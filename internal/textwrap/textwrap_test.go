package textwrap

import (
	"strings"
	"testing"
	"unicode/utf8"
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
