package oomexplain

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current output")

// TestGolden pins the full JSON of every capture's incidents (parsed
// fields and explanations) to testdata/golden; run with -update after an
// intended change and review the diff.
func TestGolden(t *testing.T) {
	var files []string
	for _, sub := range []string{"kernel", "cuda", "host"} {
		m, _ := filepath.Glob(filepath.Join("testdata", sub, "*"))
		files = append(files, m...)
	}
	for _, f := range files {
		rel, _ := filepath.Rel("testdata", f)
		t.Run(rel, func(t *testing.T) {
			incs := parseFile(t, rel)
			for _, inc := range incs {
				noBadVerbs(t, rel, inc.Explanation)
			}
			got, err := json.MarshalIndent(incs, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := filepath.Join("testdata", "golden", strings.ReplaceAll(rel, "/", "__")+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update)", err)
			}
			if string(got) != string(want) {
				t.Errorf("output differs from %s (run with -update and review the diff)", golden)
			}
		})
	}
}
