package oomexplain

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/kmsg"
)

// parseFile parses a testdata file and explains the result.
func parseFile(t *testing.T, name string) []Incident {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Fixed zone and year: dmesg -T and syslog stamps carry neither, and
	// the golden files must not depend on the machine or the date.
	incs, err := Parse(f, Options{Source: name, Lines: kmsg.ParseOptions{Location: time.UTC, Year: 2026}})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	ExplainAll(incs, Context{})
	return incs
}

func ptrEq[T comparable](p *T, want T) bool { return p != nil && *p == want }
