package cli

import (
	"os"
	"path/filepath"
	"testing"
)

func TestGenDocs(t *testing.T) {
	dir := t.TempDir()
	man, compl := filepath.Join(dir, "man"), filepath.Join(dir, "completions")
	if _, errs, code := runCLI(t, "gen-docs", "--man", man, "--completions", compl); code != 0 {
		t.Fatalf("gen-docs: code %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(man, "torchmem.1")); err != nil {
		t.Fatalf("no top-level man page: %v", err)
	}
	for _, f := range []string{"torchmem.bash", "_torchmem", "torchmem.fish"} {
		if st, err := os.Stat(filepath.Join(compl, f)); err != nil || st.Size() == 0 {
			t.Fatalf("completion %s missing or empty: %v", f, err)
		}
	}
}
