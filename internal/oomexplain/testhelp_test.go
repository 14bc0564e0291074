package oomexplain

import (
	"os"
	"path/filepath"
	"testing"
)

// parseFile parses a testdata file and explains the result.
func parseFile(t *testing.T, name string) []Incident {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	incs, err := Parse(f, Options{Source: name})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	ExplainAll(incs, Context{})
	return incs
}

func ptrEq[T comparable](p *T, want T) bool { return p != nil && *p == want }
