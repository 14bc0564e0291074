package cli

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// cli parses flags, calls one feature API and prints (issue 22): the
// logic of a command lives in its feature package. This fails when a
// command file reaches past that API to the packages below it; the
// package-wide rules are buildcheck's TestLayers, these are per file.
func TestCLIImportsOnlyFeatureAPIs(t *testing.T) {
	const mod = "github.com/torchmem/torchmem/internal/"
	// Never in cli: the job cgroup belongs to the supervisor and runner,
	// full-screen views to internal/tui.
	banned := []string{mod + "jobcgroup", "charm.land/bubbletea/v2"}
	// The run command's files: the runner owns the run's record, settings,
	// scope and views.
	runBanned := append([]string{mod + "store", mod + "procfs", mod + "gpu", mod + "policy", mod + "kmsg",
		mod + "cgroup", mod + "hook", mod + "tui", "golang.org/x/sys/unix", "syscall", "os/exec"}, banned...)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		deny := banned
		if strings.HasPrefix(f, "run") && !strings.HasPrefix(f, "runs") {
			deny = runBanned
		}
		for _, is := range af.Imports {
			p, _ := strconv.Unquote(is.Path.Value)
			for _, d := range deny {
				if p == d {
					t.Errorf("%s imports %s: move that logic behind its feature package's API", f, p)
				}
			}
		}
	}
}
