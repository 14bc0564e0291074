package lint

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/i18n"
	"golang.org/x/text/language"
)

var update = flag.Bool("update", false, "rewrite testdata/report.*.golden")

// TestGoldenReport: the text report of every positive rule case (each
// rule's messages and fixes), with and without a PyTorch version that
// changes the fixes, in English and in Chinese (testdata/report.en.golden,
// testdata/report.zh.golden; -update rewrites them). The JSON of the
// findings is the same in both.
func TestGoldenReport(t *testing.T) {
	paths, _ := filepath.Glob("testdata/rules/*_pos*.py")
	paths = append(paths, "testdata/rules/tm000_syntax.py")
	results := lintEach(t, testPython(t), paths)
	old := map[string]*Result{}
	for _, p := range []string{"testdata/rules/tm001_pos.py", "testdata/rules/tm004_pos.py", "testdata/rules/tm005_pos.py", "testdata/rules/tm009_pos.py"} {
		res, err := Lint(t.Context(), []string{p}, Options{Python: testPython(t), TorchVersion: "1.13"})
		if err != nil {
			t.Fatal(err)
		}
		old[p] = res
	}
	for _, lang := range []language.Tag{i18n.EN, i18n.ZH} {
		var b bytes.Buffer
		for _, p := range paths {
			if err := WriteText(&b, results[p].Findings, lang); err != nil {
				t.Fatal(err)
			}
		}
		b.WriteString("# --torch-version 1.13\n")
		for _, p := range []string{"testdata/rules/tm001_pos.py", "testdata/rules/tm004_pos.py", "testdata/rules/tm005_pos.py", "testdata/rules/tm009_pos.py"} {
			if err := WriteText(&b, old[p].Findings, lang); err != nil {
				t.Fatal(err)
			}
		}
		name := filepath.Join("testdata", "report."+i18n.Base(lang).String()+".golden")
		if *update {
			if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(name)
		if err != nil {
			t.Fatalf("%v (go test -update)", err)
		}
		if !bytes.Equal(want, b.Bytes()) {
			t.Errorf("%s differs (go test -update to accept):\n%s", name, b.String())
		}
		if lang == i18n.ZH && strings.Contains(b.String(), "fix: ") {
			t.Errorf("zh report has an English label")
		}
	}
}

// TestMessagesComplete: every message and every rule's summary and fix
// has its Chinese text with the same arguments.
func TestMessagesComplete(t *testing.T) {
	if m := catalog.Missing(); len(m) > 0 {
		t.Errorf("catalog incomplete:\n%s", strings.Join(m, "\n"))
	}
	for _, r := range Rules() {
		s, fix := r.Text(i18n.ZH)
		if s == r.Summary || fix == r.Fix || s == ruleSummaryID(r.ID) {
			t.Errorf("%s: no Chinese summary or fix", r.ID)
		}
	}
}
