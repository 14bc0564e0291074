package lint

import (
	"context"
	"os"
	"strings"
	"testing"
)

// TestLintPaths lints the paths in TORCHMEM_LINT_PATHS (space-separated)
// and logs the findings: a manual check over real scripts, skipped in CI.
func TestLintPaths(t *testing.T) {
	env := os.Getenv("TORCHMEM_LINT_PATHS")
	if env == "" {
		t.Skip("set TORCHMEM_LINT_PATHS to lint real scripts")
	}
	res, err := Lint(context.Background(), strings.Fields(env), Options{Python: testPython(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Findings {
		t.Logf("%s:%d:%d: %s %s", f.File, f.Line, f.Col, f.Rule, f.Message)
	}
	t.Logf("%d files, %d findings", res.Files, len(res.Findings))
}
