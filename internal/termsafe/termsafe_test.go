package termsafe

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestLine(t *testing.T) {
	for in, want := range map[string]string{
		"python3 train.py --lr 0.1": "python3 train.py --lr 0.1",
		"résumé — 日本":               "résumé — 日本",
		"\x1b]0;pwned\x07\x1b[2J":   `\x1b]0;pwned\x07\x1b[2J`,
		"ok\rFAKE":                  `ok\rFAKE`,
		"abc\b\b\bxyz":              `abc\x08\x08\x08xyz`,
		"a\nb\tc":                   `a\nb\tc`,
		"\u009b31m":                 `\u009b31m`,
		"file\u202etxt.exe":         `file\u202etxt.exe`,
		"\u2066x\u2069 \u200f":      `\u2066x\u2069 \u200f`,
		"bad \xff\xfe utf8":         `bad \xff\xfe utf8`,
		"del\x7f nul\x00":           `del\x7f nul\x00`,
		"line\u2028sep":             `line\u2028sep`,
	} {
		if got := Line(in); got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestText(t *testing.T) {
	in := "Traceback:\n\tFile \"x.py\"\r\n\x1b[31mRuntimeError\x1b[0m: CUDA out of memory"
	want := "Traceback:\n\tFile \"x.py\"\\r\n\\x1b[31mRuntimeError\\x1b[0m: CUDA out of memory"
	if got := Text(in); got != want {
		t.Errorf("Text = %q, want %q", got, want)
	}
}

// TestSafeInputNotCopied: the common case returns s itself.
func TestSafeInputNotCopied(t *testing.T) {
	s := "python3 train.py"
	if n := testing.AllocsPerRun(100, func() { _ = Line(s) }); n != 0 {
		t.Errorf("Line of plain ASCII allocated %v times", n)
	}
}

// FuzzEscape: whatever the input, the output is valid UTF-8 without a
// control character (Text keeps \n and \t only), and text that needed no
// escaping comes back unchanged.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"plain", "\x1b]0;pwned\x07\x1b[2J", "a\r\nb\tc", "\u202e\u0085\xc2", "日本\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		line, text := Line(s), Text(s)
		check(t, "Line", s, line, "")
		check(t, "Text", s, text, "\n\t")
	})
}

func check(t *testing.T, name, in, out, allowed string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("%s(%q) = %q: not UTF-8", name, in, out)
	}
	for _, r := range out {
		if (unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Bidi_Control, r)) && !strings.ContainsRune(allowed, r) {
			t.Fatalf("%s(%q) = %q keeps %U", name, in, out, r)
		}
	}
	clean := utf8.ValidString(in) && strings.IndexFunc(in, func(r rune) bool {
		return unsafeRune(r) && !strings.ContainsRune(allowed, r)
	}) < 0
	if clean && out != in {
		t.Fatalf("%s(%q) = %q: changed text that needed no escaping", name, in, out)
	}
}
