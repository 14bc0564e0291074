package lint

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// testPython returns an interpreter for the tests, or skips.
func testPython(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("TORCHMEM_TEST_PYTHON"); p != "" {
		return p
	}
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on PATH: the lint helper needs Python 3.8+")
	}
	return p
}

// testHost is the machine TM013 cases are judged against: a container with
// a 64 MiB /dev/shm and a 100-process limit.
func testHost() *Host {
	procs, shm := uint64(100), uint64(64<<20)
	return &Host{MaxProcs: &procs, ShmBytes: &shm}
}

var wantRe = regexp.MustCompile(`#.*\bwant: ((?:TM\d{3}[ ,]*)+)`)

// wants reads "# want: TM002" markers: rule ids expected on that line.
func wants(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i, line := range strings.Split(string(data), "\n") {
		if m := wantRe.FindStringSubmatch(line); m != nil {
			for _, id := range regexp.MustCompile(`TM\d{3}`).FindAllString(m[1], -1) {
				out = append(out, strconv.Itoa(i+1)+":"+id)
			}
		}
	}
	sort.Strings(out)
	return out
}

func got(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, strconv.Itoa(f.Line)+":"+f.Rule)
	}
	sort.Strings(out)
	return out
}

// lintEach parses all files with one Python run and lints each file as its
// own project, so facts never leak between cases.
func lintEach(t *testing.T, python string, paths []string) map[string]*Result {
	t.Helper()
	parsed, err := ParseFiles(context.Background(), python, paths)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*Result{}
	for _, p := range parsed {
		opts := Options{}
		if strings.Contains(filepath.Base(p.Path), "tm013") {
			opts.Host = testHost()
		}
		res, err := lintParsed([]Parsed{p}, opts)
		if err != nil {
			t.Fatalf("%s: %v", p.Path, err)
		}
		out[p.Path] = res
	}
	return out
}

func TestRuleCases(t *testing.T) {
	checkRuleCases(t, testPython(t))
}

// TestRuleCasesAcrossPythons runs the same cases with every interpreter in
// TORCHMEM_TEST_PYTHONS (space-separated; 3.8 and newer): the helper and
// the rules must not depend on the Python version (keyword nodes have no
// position before 3.9, for example). Older interpreters must fail clearly.
func TestRuleCasesAcrossPythons(t *testing.T) {
	list := strings.Fields(os.Getenv("TORCHMEM_TEST_PYTHONS"))
	if len(list) == 0 {
		t.Skip("set TORCHMEM_TEST_PYTHONS to check several interpreters")
	}
	for _, py := range list {
		t.Run(filepath.Base(py), func(t *testing.T) {
			out, err := exec.Command(py, "-c", "import sys; print(sys.version_info >= (3, 8))").Output()
			if err != nil {
				t.Fatalf("%s: %v", py, err)
			}
			if strings.TrimSpace(string(out)) != "True" {
				_, err := ParseFiles(context.Background(), py, []string{"testdata/rules/tm011_pos.py"})
				if err == nil || !strings.Contains(err.Error(), "too old") && !strings.Contains(err.Error(), "failed") {
					t.Fatalf("old interpreter: want a clear error, got %v", err)
				}
				t.Logf("old interpreter refused: %v", err)
				return
			}
			checkRuleCases(t, py)
		})
	}
}

func checkRuleCases(t *testing.T, python string) {
	paths, _ := filepath.Glob("testdata/rules/*.py")
	if len(paths) == 0 {
		t.Fatal("no rule cases")
	}
	results := lintEach(t, python, paths)
	fired := map[string]bool{}
	for _, path := range paths {
		want, have := wants(t, path), got(results[path].Findings)
		if strings.Join(want, " ") != strings.Join(have, " ") {
			t.Errorf("%s:\n want %v\n got  %v", path, want, have)
			for _, f := range results[path].Findings {
				t.Logf("  %s:%d:%d: %s %s", f.File, f.Line, f.Col, f.Rule, f.Message)
			}
		}
		for _, f := range results[path].Findings {
			fired[f.Rule] = true
		}
	}
	for _, r := range allRules {
		if !fired[r.ID] {
			t.Errorf("rule %s never fired on its positive cases", r.ID)
		}
	}
}
