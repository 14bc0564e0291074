package lint

import (
	"sort"
	"unicode/utf8"

	"github.com/torchmem/torchmem/internal/i18n"
)

// Finding is one reported problem. Line and Col are 1-based; Col counts
// characters (Unicode code points), as editors do.
type Finding struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Col      int    `json:"col"`
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
	Fix      string `json:"fix"`
	// endLine: the last line of the statement holding the finding, where a
	// suppression comment also counts (black puts it after the last argument).
	endLine int
	// text: Message and Fix as catalog messages (messages.go), rendered in
	// the reader's language by Text; nil for a finding read from JSON.
	text *findingText
}

// Severities, from the least to the most serious.
const (
	SevInfo    = "info"
	SevWarning = "warning"
	SevError   = "error"
)

// report adds a finding for rule at n (or its nearest positioned ancestor:
// some nodes carry no position on Python 3.8), saying message id with args;
// its fix is the rule's.
func (f *file) report(n *Node, rule, id string, args ...any) {
	for n != nil && n.Line == 0 {
		n = n.Parent
	}
	line, col, end := 1, 1, 0
	if n != nil {
		line, col = n.Line, n.Col+1
		for s := n; s != nil; s = s.Parent {
			if s.EndLine > 0 || s.Field == "body" || s.Field == "orelse" || s.Field == "finalbody" {
				end = s.EndLine // the enclosing statement
				break
			}
		}
	}
	col = f.charCol(line, col)
	r := ruleByID[rule]
	text := &findingText{msg: word(id, args...), fix: word(ruleFixID(rule))}
	f.findings = append(f.findings, Finding{
		File: f.path, Line: line, Col: col, Rule: rule,
		Severity: r.Severity, Message: text.msg.in(i18n.EN), Fix: r.Fix, endLine: end, text: text,
	})
}

// sortFindings orders by file, position, rule and drops exact duplicates.
func sortFindings(fs []Finding) []Finding {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Col != b.Col {
			return a.Col < b.Col
		}
		return a.Rule < b.Rule
	})
	out := fs[:0]
	for i, x := range fs {
		if i > 0 && x.same(fs[i-1]) {
			continue
		}
		out = append(out, x)
	}
	return out
}

// charCol turns Python's 1-based UTF-8 byte column into a character column.
func (f *file) charCol(line, byteCol int) int {
	if line < 1 || line > len(f.lines) {
		return byteCol
	}
	text := f.lines[line-1]
	if byteCol-1 > len(text) || byteCol < 1 {
		return byteCol
	}
	return utf8.RuneCountInString(text[:byteCol-1]) + 1
}

// same: a and b report the same thing at the same place (what they print;
// two equal messages are one finding however they were built).
func (a Finding) same(b Finding) bool {
	return a.File == b.File && a.Line == b.Line && a.Col == b.Col && a.Rule == b.Rule &&
		a.Severity == b.Severity && a.Message == b.Message && a.Fix == b.Fix && a.endLine == b.endLine
}
