// Package textwrap fits text to terminals (read over SSH, 80 columns):
// the explanations doctor and estimate print, and the live view's notices.
package textwrap

import (
	"strings"
	"unicode/utf8"
)

// Width is where prose wraps.
const Width = 80

// Wrap breaks text at spaces so each line fits width, the first after
// prefix and the rest indented as far; a word longer than a line stays
// whole.
func Wrap(prefix, text string, width int) string {
	indent := strings.Repeat(" ", utf8.RuneCountInString(prefix))
	var b strings.Builder
	b.WriteString(prefix)
	col := len(indent)
	for i, w := range strings.Fields(text) {
		n := utf8.RuneCountInString(w) // columns, not bytes ("—")
		if i > 0 && col+1+n > width {
			b.WriteString("\n" + indent)
			col = len(indent)
		} else if i > 0 {
			b.WriteByte(' ')
			col++
		}
		b.WriteString(w)
		col += n
	}
	return b.String()
}

// Cut bounds s to n characters (runes, never inside one), its last one an
// ellipsis when it was longer; n <= 0 leaves s whole.
func Cut(s string, n int) string {
	if n <= 0 || utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
