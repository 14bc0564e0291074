package lint

import (
	"fmt"
	"path/filepath"
	"strings"
)

// UnifiedDiff returns the unified diff (3 lines of context, "--- a/PATH"
// and "+++ b/PATH" headers, as git and patch read it) between a fix's old
// and new text; "" when they are equal. The fixes edit within lines, so
// old and new line i correspond and only changed lines form hunks; if the
// line counts ever differ, the changed middle is one hunk.
func UnifiedDiff(fx FileFix) string {
	a, b := splitLines(fx.Old), splitLines(fx.New)
	type pair struct{ a0, a1, b0, b1 int } // changed ranges [a0,a1) and [b0,b1)
	var changes []pair
	if len(a) == len(b) {
		for i := range a {
			if a[i] == b[i] {
				continue
			}
			if n := len(changes); n > 0 && changes[n-1].a1 == i {
				changes[n-1].a1, changes[n-1].b1 = i+1, i+1 // a run of changed lines
			} else {
				changes = append(changes, pair{i, i + 1, i, i + 1})
			}
		}
	} else {
		p := 0
		for p < len(a) && p < len(b) && a[p] == b[p] {
			p++
		}
		s := 0
		for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
			s++
		}
		changes = append(changes, pair{p, len(a) - s, p, len(b) - s})
	}
	if len(changes) == 0 {
		return ""
	}
	const ctx = 3
	var out strings.Builder
	pa, pb := "a/"+fx.Path, "b/"+fx.Path
	if filepath.IsAbs(fx.Path) {
		pa, pb = fx.Path, fx.Path
	}
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", pa, pb)
	for i := 0; i < len(changes); {
		// Merge changes whose contexts touch into one hunk.
		j := i
		for j+1 < len(changes) && changes[j+1].a0-changes[j].a1 <= 2*ctx {
			j++
		}
		first, last := changes[i], changes[j]
		a0, a1 := max(first.a0-ctx, 0), min(last.a1+ctx, len(a))
		b0 := first.b0 - (first.a0 - a0)
		b1 := last.b1 + (a1 - last.a1)
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(a0, a1-a0), hunkRange(b0, b1-b0))
		pos := a0
		for k := i; k <= j; k++ {
			c := changes[k]
			for ; pos < c.a0; pos++ {
				out.WriteString(" " + a[pos] + "\n")
			}
			for _, l := range a[c.a0:c.a1] {
				out.WriteString("-" + l + "\n")
			}
			for _, l := range b[c.b0:c.b1] {
				out.WriteString("+" + l + "\n")
			}
			pos = c.a1
		}
		for ; pos < a1; pos++ {
			out.WriteString(" " + a[pos] + "\n")
		}
		i = j + 1
	}
	return out.String()
}

// hunkRange spells "start,count" with diff's 1-based start (0 for empty).
func hunkRange(start, count int) string {
	if count == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if count == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}

// splitLines splits text into lines without the empty string after a
// final newline.
func splitLines(text []byte) []string {
	l := strings.Split(string(text), "\n")
	if len(l) > 0 && l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
}
