package tui

import (
	"strings"

	"github.com/torchmem/torchmem/internal/i18n"
)

// WideWidth is the terminal width from which the process table adds the
// state, CPU% and memory-bar columns and each job its RSS history: those
// take 21 columns, which at 80 would leave the command line under 10.
const WideWidth = 120

// column is one column of the process table: a width in terminal columns
// and a side to align to. The last column (the command) takes the rest.
type column struct {
	id    string // message id of its heading
	width int
	right bool
}

// The process table's columns at 80 and at WideWidth or more. PID holds
// the selection mark, up to two levels of indent, the fold mark and seven
// digits.
var (
	narrowCols = []column{{"col.pid", 10, false}, {"col.role", 6, false}, {"col.gpu", 6, true}, {"col.rss", 6, true},
		{"col.pss", 6, true}, {"col.uss", 6, true}, {"col.swap", 5, true}, {"col.command", 0, false}}
	wideCols = []column{{"col.pid", 10, false}, {"col.role", 6, false}, {"col.state", 1, false}, {"col.cpu", 5, true},
		{"col.gpu", 6, true}, {"col.rss", 6, true}, {"col.pss", 6, true}, {"col.uss", 6, true}, {"col.swap", 5, true},
		{"col.mem", barWidth + 2, false}, {"col.command", 0, false}}
)

// barWidth is the inside of a process's memory bar.
const barWidth = 10

// row lays cells out in cols, measuring by display width (a CJK heading
// takes two columns per character) and cutting a cell that is too wide,
// so columns stay aligned in every language. cells has one per column;
// the last is the command.
func row(cols []column, cells []string) string {
	var b strings.Builder
	for i, c := range cols {
		v := ""
		if i < len(cells) {
			v = cells[i]
		}
		if c.width == 0 { // the command: two spaces before it, no padding
			b.WriteString("  " + v)
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		v = i18n.Cut(v, c.width)
		if c.right {
			b.WriteString(i18n.PadLeft(v, c.width))
		} else {
			b.WriteString(i18n.PadRight(v, c.width))
		}
	}
	return strings.TrimRight(b.String(), " ")
}
