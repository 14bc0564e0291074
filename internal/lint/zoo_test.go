package lint

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestSyntaxZoo: unusual but valid syntax parses, decodes and produces no
// finding. Files named pyNNN need that Python version; older interpreters
// must report them as TM000, nothing worse.
func TestSyntaxZoo(t *testing.T) {
	python := testPython(t)
	paths, _ := filepath.Glob("testdata/zoo/*.py")
	res, err := Lint(context.Background(), paths, Options{Python: python})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Findings {
		if f.Rule == "TM000" && strings.HasSuffix(f.File, "py312.py") {
			t.Logf("%s: this Python predates 3.12: %s", f.File, f.Message)
			continue
		}
		t.Errorf("%s:%d:%d: %s %s", f.File, f.Line, f.Col, f.Rule, f.Message)
	}
}
