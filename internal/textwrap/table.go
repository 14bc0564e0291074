package textwrap

import (
	"bytes"
	"io"
	"strings"

	"github.com/torchmem/torchmem/internal/i18n"
)

// Table aligns tab-separated cells into columns as text/tabwriter does
// (padding 2, left-aligned, a column block ends at a line without that
// cell, the last cell of a line is not padded), but measures cells in
// display columns: tabwriter counts runes, so a Chinese header or cell
// (two columns a character) shifts every column after it.
type Table struct {
	w   io.Writer
	buf bytes.Buffer
}

// tablePadding is the space between columns.
const tablePadding = 2

// NewTable returns a table writing to w; nothing is written until Flush.
func NewTable(w io.Writer) *Table { return &Table{w: w} }

// Write buffers p: cells end with '\t', lines with '\n'.
func (t *Table) Write(p []byte) (int, error) { return t.buf.Write(p) }

// Flush writes the aligned table and empties the buffer.
func (t *Table) Flush() error {
	text := t.buf.String()
	t.buf.Reset()
	if text == "" {
		return nil
	}
	trailing := strings.HasSuffix(text, "\n")
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	cells := make([][]string, len(lines))
	for i, l := range lines {
		cells[i] = strings.Split(l, "\t")
	}
	var out strings.Builder
	f := &tableFormat{cells: cells, out: &out}
	f.format(0, len(cells))
	s := out.String()
	if !trailing {
		s = strings.TrimSuffix(s, "\n")
	}
	_, err := io.WriteString(t.w, s)
	return err
}

type tableFormat struct {
	cells  [][]string
	widths []int
	out    *strings.Builder
}

// format lays out lines [line0, line1) from column len(widths) on: a run
// of consecutive lines that have a cell in this column is a block whose
// width is its widest cell plus padding (text/tabwriter's algorithm).
func (f *tableFormat) format(line0, line1 int) {
	column := len(f.widths)
	for this := line0; this < line1; this++ {
		if column >= len(f.cells[this])-1 {
			continue
		}
		f.writeLines(line0, this)
		line0 = this
		width := 0
		for ; this < line1 && column < len(f.cells[this])-1; this++ {
			width = max(width, i18n.Width(f.cells[this][column])+tablePadding)
		}
		f.widths = append(f.widths, width)
		f.format(line0, this)
		f.widths = f.widths[:len(f.widths)-1]
		line0 = this
		this-- // the loop's increment: look again at the line that ended the block
	}
	f.writeLines(line0, line1)
}

func (f *tableFormat) writeLines(line0, line1 int) {
	for _, line := range f.cells[line0:line1] {
		for j, c := range line {
			if j < len(f.widths) && j < len(line)-1 {
				f.out.WriteString(i18n.PadRight(c, f.widths[j]))
			} else {
				f.out.WriteString(c)
			}
		}
		f.out.WriteByte('\n')
	}
}
