// Package termsafe makes text that a job, a log or a file controls safe to
// print on a terminal. A training script's exception, a process's command
// line, a kernel log line or a snapshot path can hold escape sequences
// (ESC, CSI, OSC such as "\x1b]0;title\x07", C1 controls), carriage
// returns and backspaces that overwrite what torchmem printed, or bidi
// overrides that reorder it; printed raw, the terminal obeys them.
//
// Every such character is shown escaped instead, visibly and in one
// notation: "\x1b", "\r", "\u202e"; bytes that are not UTF-8 as "\xff".
// The result is valid UTF-8 and holds no control character but the line
// breaks and tabs that Text keeps. JSON output needs none of this:
// encoding/json escapes control characters itself.
//
// Exported API:
//
//	Line(s string) string // one field of one line: \n and \t escaped too
//	Text(s string) string // multi-line text (a traceback): \n and \t kept
package termsafe

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Line returns s with every control character escaped, line breaks and
// tabs included: for a value printed within a line or a table cell, where
// a newline would forge a line of torchmem's own.
func Line(s string) string { return escape(s, false) }

// Text returns s with every control character escaped except "\n" and
// "\t": for multi-line texts such as an exception's traceback.
func Text(s string) string { return escape(s, true) }

func escape(s string, keepLines bool) string {
	if safeASCII(s, keepLines) {
		return s // the common case: no copy
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keepLines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case unsafeRune(r):
			b.WriteString(quote(r))
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// safeASCII reports whether s is printable ASCII (and, with keepLines,
// newlines and tabs), which needs no escaping.
func safeASCII(s string, keepLines bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 0x20 || c > 0x7e) && !(keepLines && (c == '\n' || c == '\t')) {
			return false
		}
	}
	return true
}

// unsafeRune: C0, DEL and C1 controls (unicode.Cc), the bidi controls
// that reorder the text around them, and the Unicode line and paragraph
// separators, which some terminals and pagers break lines at.
func unsafeRune(r rune) bool {
	return unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029'
}

// quote is the visible form of r: the short escapes people know, \xNN
// below U+0080 and \uNNNN above.
func quote(r rune) string {
	switch r {
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	case '\t':
		return `\t`
	}
	if r < 0x80 {
		return fmt.Sprintf(`\x%02x`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
}
