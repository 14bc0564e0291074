package lint

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// bigScript builds a file of at least lines lines from whole files of the
// clean corpus (real training-code shapes, not padding), each copy nested
// in its own class so the module stays valid Python.
func bigScript(tb testing.TB, lines int) string {
	tb.Helper()
	paths, _ := filepath.Glob("testdata/clean/*.py")
	var b strings.Builder
	n := 0
	for i := 0; n < lines; i++ {
		data, err := os.ReadFile(paths[i%len(paths)])
		if err != nil {
			tb.Fatal(err)
		}
		fmt.Fprintf(&b, "\n\nclass Copy%d:\n", i)
		for _, l := range strings.Split(string(data), "\n") {
			b.WriteString("    " + l + "\n")
			n++
		}
		b.WriteString("    pass\n")
		n += 4
	}
	p := filepath.Join(tb.TempDir(), "big.py")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return p
}

// BenchmarkLint5000Lines is the end-to-end cost of linting one 5,000-line
// file: Python start, ast dump, JSON decode, all rules.
func BenchmarkLint5000Lines(b *testing.B) {
	python := testPython(b)
	path := bigScript(b, 5000)
	for i := 0; i < b.N; i++ {
		res, err := Lint(context.Background(), []string{path}, Options{Python: python})
		if err != nil {
			b.Fatal(err)
		}
		if res.Files != 1 || len(res.Findings) > 0 {
			b.Fatalf("the clean corpus copy should lint clean: %+v", res.Findings)
		}
	}
}

// BenchmarkRules5000Lines is the Go side alone (decode excluded): all rules
// over an already parsed 5,000-line file.
func BenchmarkRules5000Lines(b *testing.B) {
	python := testPython(b)
	parsed, err := ParseFiles(context.Background(), python, []string{bigScript(b, 5000)})
	if err != nil || parsed[0].Err != nil {
		b.Fatalf("parse: %v %+v", err, parsed[0].Err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := lintParsed(parsed, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecode5000Lines is the helper-output decoding alone (the JSON of
// the same 5,000-line file, captured once from the helper).
func BenchmarkDecode5000Lines(b *testing.B) {
	python := testPython(b)
	path := bigScript(b, 5000)
	cmd := exec.Command(python, "-I", "-S", "-c", helperSource)
	cmd.Stdin = strings.NewReader(`["` + path + `"]`)
	line, err := cmd.Output()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(line)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := decodeHelperLine(line); err != nil {
			b.Fatal(err)
		}
	}
}
