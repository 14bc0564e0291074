package i18n

import "github.com/charmbracelet/x/ansi"

// Width is the number of terminal columns s takes: a CJK character takes
// two, a combining mark none, escape sequences none. Everything that
// aligns, pads, wraps or cuts text for a terminal measures with it, never
// with len or utf8.RuneCountInString. x/ansi (already used by lipgloss)
// owns the Unicode East Asian Width and grapheme tables.
func Width(s string) int {
	if printableASCII(s) {
		return len(s)
	}
	return ansi.StringWidth(s)
}

// printableASCII reports whether s is only printable ASCII (space to
// '~'): one column a byte, no grapheme clusters, no escapes. Figures,
// headings and most command lines are; measuring them byte by byte keeps
// the live view's redraw as cheap as it was before it measured columns
// (x/ansi's grapheme walk costs ~20x more on such text).
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// Cut shortens s to at most n columns, ending in "…" when it was cut,
// never splitting a wide character or a grapheme cluster.
func Cut(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if Width(s) <= n {
		return s
	}
	if printableASCII(s) {
		return s[:n-1] + "…"
	}
	return ansi.Truncate(s, n, "…")
}

// PadRight pads s with spaces to n columns (s unchanged when wider).
func PadRight(s string, n int) string {
	if w := Width(s); w < n {
		return s + spaces(n-w)
	}
	return s
}

// PadLeft right-aligns s in n columns.
func PadLeft(s string, n int) string {
	if w := Width(s); w < n {
		return spaces(n-w) + s
	}
	return s
}

func spaces(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = ' '
	}
	return string(b)
}
