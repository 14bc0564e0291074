// Package textwrap breaks prose for 80-column terminals (read over SSH):
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
