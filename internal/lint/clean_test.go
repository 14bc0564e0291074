package lint

import (
	"context"
	"path/filepath"
	"testing"
)

// TestCleanCorpus: idiomatic, correct training code (in the style of
// PyTorch's official examples, a Hugging Face-style loop, DDP, Lightning)
// must produce no findings at all. The files are linted together, as one
// project, the way `torchmem lint dir/` sees them.
func TestCleanCorpus(t *testing.T) {
	python := testPython(t)
	paths, _ := filepath.Glob("testdata/clean/*.py")
	if len(paths) < 8 {
		t.Fatalf("clean corpus has %d files", len(paths))
	}
	procs, shm := uint64(63704), uint64(64<<30)
	res, err := Lint(context.Background(), paths, Options{Python: python, Host: &Host{MaxProcs: &procs, ShmBytes: &shm}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Findings {
		t.Errorf("%s:%d:%d: %s %s", f.File, f.Line, f.Col, f.Rule, f.Message)
	}
	if res.Files != len(paths) {
		t.Errorf("linted %d files, want %d", res.Files, len(paths))
	}
}
