package oomexplain

import (
	"regexp"
	"strings"
)

// Most of PyTorch's clauses put the size first ("10.34 GiB already
// allocated"), and "[Tt]his process has" starts with a class. A regexp
// with no literal prefix is tried at every position of the message (a
// 2.2 message: 7-27 µs each); finding the clause's words first and
// starting the regexp just before them is what makes a message cheap.

// clauseRe is a regexp without anchors whose every match holds lit.
type clauseRe struct {
	re  *regexp.Regexp
	lit string
	// back: a match starts at most back bytes before its lit; -1 when
	// it starts with a size (digits, '.', one space, letters).
	back int
}

// newSizeFirst: size, then lit, then rest (a regexp).
func newSizeFirst(lit, rest string) clauseRe {
	return clauseRe{regexp.MustCompile(size + regexp.QuoteMeta(lit) + rest), lit, -1}
}

// find returns what re.FindStringSubmatch(s) returns: no match starts
// before the bound found from lit's first occurrence. For a size, the
// bound is the start of the run of size characters that ends there: a
// match starting earlier (ending at that or a later lit) would hold the
// character that ends the run.
func (r clauseRe) find(s string) []string {
	i := strings.Index(s, r.lit)
	if i < 0 {
		return nil
	}
	if r.back >= 0 {
		i = max(0, i-r.back)
	}
	for r.back < 0 && i > 0 && sizeChar(s[i-1]) {
		i--
	}
	return r.re.FindStringSubmatch(s[i:])
}

func sizeChar(c byte) bool {
	return c >= '0' && c <= '9' || c == '.' || c == ' ' || c|0x20 >= 'a' && c|0x20 <= 'z'
}

// collapseSpace replaces each run of RE2's \s ([\t\n\f\r ]) with one
// space, as regexp `\s+` does; s itself when there is nothing to replace.
func collapseSpace(s string) string {
	var b []byte
	last := 0 // s[last:i] is still to be copied
	for i := 0; i < len(s); i++ {
		if !isSpaceRE(s[i]) {
			continue
		}
		j := i + 1
		for j < len(s) && isSpaceRE(s[j]) {
			j++
		}
		if s[i] == ' ' && j == i+1 {
			continue // a single space stays
		}
		if b == nil {
			b = make([]byte, 0, len(s))
		}
		b = append(append(b, s[last:i]...), ' ')
		last, i = j, j-1
	}
	if b == nil {
		return s
	}
	return string(append(b, s[last:]...))
}

func isSpaceRE(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }
