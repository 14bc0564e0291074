package lint

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateFix = flag.Bool("update-fix", false, "rewrite testdata/fix/*.py.fixed from the fixer's output")

// TestFixRoundTrip applies --fix to each testdata/fix/*.py and checks: the
// output is the golden .py.fixed; only lines a fix names changed (every
// other byte is identical); the result parses; TM004/TM011 no longer fire
// on it; and fixing again changes nothing (the rewrites no longer apply).
func TestFixRoundTrip(t *testing.T) {
	py := testPython(t)
	paths, _ := filepath.Glob("testdata/fix/*.py")
	if len(paths) == 0 {
		t.Fatal("no fix fixtures")
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			tmp := filepath.Join(t.TempDir(), filepath.Base(path))
			if err := os.WriteFile(tmp, src, 0o644); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			opts := Options{Python: py}
			fixes, err := Fix(ctx, []string{tmp}, opts)
			if err != nil || len(fixes) != 1 {
				t.Fatalf("Fix: %d fixes, %v", len(fixes), err)
			}
			fx := fixes[0]
			golden := path + ".fixed"
			if *updateFix {
				if err := os.WriteFile(golden, fx.New, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if string(fx.New) != string(want) {
				t.Errorf("fixed text differs from %s:\n%s", golden, UnifiedDiff(FileFix{Path: path, Old: want, New: fx.New}))
			}
			checkOnlyFixedLinesChanged(t, fx)
			if err := WriteFixes(fixes); err != nil {
				t.Fatal(err)
			}
			parsed, err := ParseFiles(ctx, py, []string{tmp})
			if err != nil || parsed[0].Err != nil {
				t.Fatalf("fixed file does not parse: %v %+v", err, parsed[0].Err)
			}
			res, err := Lint(ctx, []string{tmp}, opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range res.Findings {
				if f.Rule == "TM004" && strings.Contains(f.Message, "set_to_none") || f.Rule == "TM011" {
					t.Errorf("still fires after --fix: %d: %s %s", f.Line, f.Rule, f.Message)
				}
			}
			again, err := Fix(ctx, []string{tmp}, opts)
			if err != nil || len(again) != 0 {
				t.Errorf("second --fix changed %d files (%v): %+v", len(again), err, again)
			}
		})
	}
}

// checkOnlyFixedLinesChanged: same number of lines, and every line that
// differs is one an applied fix starts on (the fixes stay within a line
// or, for map_location, within the call's last argument line).
func checkOnlyFixedLinesChanged(t *testing.T, fx FileFix) {
	t.Helper()
	a, b := splitLines(fx.Old), splitLines(fx.New)
	if len(a) != len(b) {
		t.Fatalf("line count changed: %d -> %d", len(a), len(b))
	}
	changed := 0
	for i := range a {
		if a[i] != b[i] {
			changed++
		}
	}
	if changed == 0 || changed > len(fx.Applied) {
		t.Errorf("%d lines changed for %d fixes: %+v", changed, len(fx.Applied), fx.Applied)
	}
}

func TestUnifiedDiff(t *testing.T) {
	old := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n"
	cases := []struct {
		name, new, want string
	}{
		{"same", old, ""},
		{"one line", strings.Replace(old, "b\n", "B\n", 1),
			"--- a/x.py\n+++ b/x.py\n@@ -1,5 +1,5 @@\n a\n-b\n+B\n c\n d\n e\n"},
		{"two hunks", strings.NewReplacer("a\n", "A\n", "l\n", "L\n").Replace(old),
			"--- a/x.py\n+++ b/x.py\n@@ -1,4 +1,4 @@\n-a\n+A\n b\n c\n d\n@@ -9,4 +9,4 @@\n i\n j\n k\n-l\n+L\n"},
		{"adjacent lines", strings.NewReplacer("e\n", "E\n", "f\n", "F\n").Replace(old),
			"--- a/x.py\n+++ b/x.py\n@@ -2,8 +2,8 @@\n b\n c\n d\n-e\n-f\n+E\n+F\n g\n h\n i\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := UnifiedDiff(FileFix{Path: "x.py", Old: []byte(old), New: []byte(c.new)}); got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}
