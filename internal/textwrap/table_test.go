package textwrap

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/torchmem/torchmem/internal/i18n"
)

// TestTableLikeTabwriter: on ASCII text the table is byte for byte what
// text/tabwriter (padding 2, the CLI's settings) prints, blocks, ragged
// lines and lines without tabs included.
func TestTableLikeTabwriter(t *testing.T) {
	for _, in := range []string{
		"ID\tNAME\tSEVERITY\tWHY\nTM001\teval-without-no-grad\twarning\tthe model runs\nTM002\taccumulated\terror\ta tensor\n",
		"a\tb\n\nlonger cell\tx\ty\n",
		"KEY\tVALUE\nrun\tabc\nno tabs here\nk\tvery long value\tz\n",
		"x\t\ty\nxx\t\t\n",
		"last\tline\twithout newline",
		"",
		"one cell\n",
	} {
		var want bytes.Buffer
		tw := tabwriter.NewWriter(&want, 0, 0, 2, ' ', 0)
		fmt.Fprint(tw, in)
		tw.Flush()
		var got bytes.Buffer
		tb := NewTable(&got)
		fmt.Fprint(tb, in)
		if err := tb.Flush(); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("input %q:\n got %q\nwant %q", in, got.String(), want.String())
		}
	}
}

// TestTableCJK: columns after a Chinese cell start at the same display
// column on every line.
func TestTableCJK(t *testing.T) {
	var b bytes.Buffer
	tb := NewTable(&b)
	fmt.Fprint(tb, "运行\t状态\t峰值\n3f2a\t已完成\t1.20 GiB\nrun-long-id\tOOM kill（主机）\t80.00 GiB\n")
	tb.Flush()
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	col := -1
	for _, l := range lines {
		// The third column starts where the text before it is as wide as
		// on the first line.
		fields := strings.Split(l, "  ")
		last := fields[len(fields)-1]
		w := i18n.Width(strings.TrimSuffix(l, last))
		if col >= 0 && w != col {
			t.Errorf("third column at %d, want %d:\n%s", w, col, b.String())
		}
		col = w
	}
	if !strings.HasPrefix(lines[1], "3f2a         已完成") {
		t.Errorf("first column not padded by width:\n%s", b.String())
	}
}
