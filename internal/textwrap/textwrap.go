// Package textwrap fits text to terminals (read over SSH, 80 columns):
// the explanations doctor and estimate print, and the live view's notices.
// Everything is measured in display columns (i18n.Width): a CJK character
// takes two, and Chinese prose, which has no spaces, may break between
// any two characters.
package textwrap

import (
	"strings"
	"unicode/utf8"

	"github.com/torchmem/torchmem/internal/i18n"
)

// Width is where prose wraps.
const Width = 80

// unit is what a line may not be broken inside: an English word, or one
// CJK character with the punctuation that must stay next to it.
type unit struct {
	text  string
	cols  int
	space bool // a space separates it from the previous unit
}

// Wrap breaks text so each line fits width columns, the first after
// prefix and the rest indented as far. English breaks at spaces (a word
// longer than a line stays whole); Chinese between characters, never
// before a closing mark (，。）) nor after an opening one (（「).
func Wrap(prefix, text string, width int) string {
	indent := strings.Repeat(" ", i18n.Width(prefix))
	var b strings.Builder
	b.WriteString(prefix)
	col := len(indent)
	for i, u := range units(text) {
		gap := 0
		if u.space {
			gap = 1
		}
		if i > 0 && col+gap+u.cols > width {
			b.WriteString("\n" + indent)
			col = len(indent)
		} else if i > 0 && u.space {
			b.WriteByte(' ')
			col++
		}
		b.WriteString(u.text)
		col += u.cols
	}
	return b.String()
}

// units splits text into unbreakable units: each space-separated field is
// one unit, except that its wide (CJK) characters are units of their own.
func units(text string) []unit {
	var out []unit
	for _, field := range strings.Fields(text) {
		first := true
		for _, seg := range segments(field) {
			out = appendUnit(out, seg, first)
			first = false
		}
	}
	return out
}

// segments cuts a field between wide characters and at the edges of runs
// of narrow ones: "显存(memory)不足" → 显, 存, (memory), 不, 足.
func segments(field string) []string {
	var out []string
	start := 0
	narrow := false
	for i, r := range field {
		wide := i18n.Width(string(r)) == 2
		switch {
		case wide && i > start:
			out = append(out, field[start:i])
			start = i
		case !wide && !narrow && i > start:
			out = append(out, field[start:i])
			start = i
		}
		narrow = !wide
	}
	return append(out, field[start:])
}

// appendUnit adds seg, gluing it to the previous unit when a line must not
// break between them (closing punctuation after, opening before; a size's
// unit after its number: "998.00 MiB" stays on one line).
func appendUnit(out []unit, seg string, space bool) []unit {
	n := len(out)
	if n > 0 && space && isSizeUnit(seg) && endsWithDigit(out[n-1].text) {
		out[n-1].text += " " + seg
		out[n-1].cols += 1 + i18n.Width(seg)
		return out
	}
	first, _ := utf8.DecodeRuneInString(seg)
	if n > 0 && !space && (strings.ContainsRune(noLineStart, first) || endsWithOpening(out[n-1].text)) {
		out[n-1].text += seg
		out[n-1].cols += i18n.Width(seg)
		return out
	}
	return append(out, unit{text: seg, cols: i18n.Width(seg), space: space})
}

// Punctuation that may not start a line (closing marks, pauses) or end one
// (opening marks), after the usual Chinese line-breaking rules.
const (
	noLineStart = "，。、；：！？）」』】》〉”’…—,.;:!?)]}%"
	noLineEnd   = "（「『【《〈“‘([{"
)

// sizeUnits: the units internal/units writes after a number, with the
// punctuation that may follow one in prose.
var sizeUnits = map[string]bool{"B": true, "KiB": true, "MiB": true, "GiB": true, "TiB": true,
	"KB": true, "MB": true, "GB": true, "TB": true}

func isSizeUnit(s string) bool {
	return sizeUnits[strings.TrimRight(s, ",.;:)")]
}

func endsWithDigit(s string) bool {
	return s != "" && s[len(s)-1] >= '0' && s[len(s)-1] <= '9'
}

func endsWithOpening(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return strings.ContainsRune(noLineEnd, r)
}

// Cut bounds s to n display columns (never inside a character), its last
// column an ellipsis when it was longer; n <= 0 leaves s whole.
func Cut(s string, n int) string {
	if n <= 0 {
		return s
	}
	return i18n.Cut(s, n)
}
