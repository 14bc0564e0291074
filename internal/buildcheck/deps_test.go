package buildcheck

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The house's layers (docs/architecture.md): leaf readers know nothing of
// the features; features know nothing of the CLI; the CLI parses flags,
// calls one feature API and prints, so it reaches no host source directly.

const module = "github.com/torchmem/torchmem/"

// leaves read one source each (or are plain helpers): they may import
// only other leaves.
var leaves = []string{
	"cgroup", "cpulist", "gpu", "hook", "hook/python", "jobs", "kmsg", "pickle", "procfs", "procfs/psi",
	"ratelimit", "shm", "termsafe", "textwrap", "units", "webassets", "estimate/models", "i18n", "identity", "allocconf",
}

// cliForbidden are the host sources and mechanisms the CLI must reach
// through a feature API (runner, supervisor, oomexplain, sample, ...).
var cliForbidden = []string{"jobcgroup", "kmsg", "hook", "procfs", "cgroup", "policy", "pickle", "ratelimit"}

// engines decide from evidence and must stay pure of the layers above.
var engines = map[string][]string{
	"oomexplain": {"supervisor", "runner", "store", "web", "metrics", "report", "tui", "sample"},
	"policy":     {"supervisor", "runner", "store", "web", "sample"},
	"estimate":   {"supervisor", "runner", "store", "web", "sample"},
}

// imports returns the module-internal packages that the non-test Go files
// of internal/<pkg> import, relative to internal/.
func imports(t *testing.T, pkg string) []string {
	t.Helper()
	dir := filepath.Join("..", pkg)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if rel, ok := strings.CutPrefix(p, module+"internal/"); ok && !slices.Contains(out, rel) {
				out = append(out, rel)
			}
		}
	}
	return out
}

// packages lists internal/<pkg> directories holding Go code.
func packages(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() || d.Name() == "testdata" {
			if d != nil && d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return err
		}
		if m, _ := filepath.Glob(filepath.Join(path, "*.go")); len(m) > 0 && path != ".." {
			rel, _ := filepath.Rel("..", path)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestLayers(t *testing.T) {
	for _, pkg := range packages(t) {
		imps := imports(t, pkg)
		for _, imp := range imps {
			switch {
			case imp == "cli":
				t.Errorf("internal/%s imports internal/cli: only cmd/ may", pkg)
			case slices.Contains(leaves, pkg) && !slices.Contains(leaves, imp):
				t.Errorf("leaf internal/%s imports the feature internal/%s", pkg, imp)
			case pkg == "cli" && slices.Contains(cliForbidden, imp):
				t.Errorf("internal/cli imports internal/%s: reach it through a feature API", imp)
			case slices.Contains(engines[pkg], imp):
				t.Errorf("the engine internal/%s imports internal/%s, a layer above it", pkg, imp)
			case pkg == "supervisor" && imp == "runner":
				t.Errorf("internal/supervisor imports internal/runner, which is built on it")
			}
		}
	}
}
