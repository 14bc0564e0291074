package oomexplain

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/kmsg"
)

// The labelled corpus (testdata/corpus/README.md): real excerpts from
// public bug trackers and forums, each with the verdict a careful expert
// gives and the figures that matter. The source of every excerpt is in its
// labels line.

type corpusLabel struct {
	File      string          `json:"file"`
	Source    string          `json:"source"`
	Note      string          `json:"note"`
	Incidents []corpusFinding `json:"incidents"`
}

type corpusFinding struct {
	Kind         Kind           `json:"kind"`
	Verdict      Verdict        `json:"verdict"`
	Alternatives []Verdict      `json:"alternatives"`
	Numbers      map[string]any `json:"numbers"`
}

func readCorpus(t *testing.T) []corpusLabel {
	t.Helper()
	var out []corpusLabel
	for _, area := range []string{"cuda", "kernel", "host"} {
		f, err := os.Open(filepath.Join("testdata", "corpus", area+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for n := 1; sc.Scan(); n++ {
			var l corpusLabel
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Fatalf("%s.jsonl:%d: %v", area, n, err)
			}
			out = append(out, l)
		}
		f.Close()
	}
	return out
}

// TestCorpus asserts every label: the incidents found (kind, in order),
// the verdict, the alternatives named, and the figures.
func TestCorpus(t *testing.T) {
	labels := readCorpus(t)
	if len(labels) < 120 {
		t.Errorf("%d labelled excerpts, want at least 120", len(labels))
	}
	for _, l := range labels {
		t.Run(l.File, func(t *testing.T) {
			incs := parseCorpusFile(t, l.File)
			if len(incs) != len(l.Incidents) {
				t.Fatalf("%d incidents %s, want %d %s", len(incs), kindsOf(incs), len(l.Incidents), wantKinds(l.Incidents))
			}
			for i, want := range l.Incidents {
				checkFinding(t, i, &incs[i], want)
			}
		})
	}
}

func parseCorpusFile(t *testing.T, name string) []Incident {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "corpus", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	incs, err := Parse(f, Options{Source: name, Lines: kmsg.ParseOptions{Location: time.UTC, Year: 2026}})
	if err != nil {
		t.Fatal(err)
	}
	incs = Group(incs)
	ExplainAll(incs, Context{})
	return incs
}

func checkFinding(t *testing.T, i int, inc *Incident, want corpusFinding) {
	t.Helper()
	e := inc.Explanation
	if inc.Kind != want.Kind {
		t.Errorf("[%d] kind %s, want %s", i, inc.Kind, want.Kind)
		return
	}
	noBadVerbs(t, fmt.Sprint(i), e)
	if e.Verdict != want.Verdict {
		t.Errorf("[%d] verdict %s %v, want %s %v: %s", i, e.Verdict, e.Alternatives, want.Verdict, want.Alternatives, e.Summary)
	}
	for _, a := range want.Alternatives {
		if a != e.Verdict && !slices.Contains(e.Alternatives, a) {
			t.Errorf("[%d] alternative %s not named (%v)", i, a, e.Alternatives)
		}
	}
	doc := incidentDoc(t, inc)
	for path, w := range want.Numbers {
		got, ok := lookupPath(doc, path)
		if !sameFigure(got, ok, w) {
			t.Errorf("[%d] %s = %v, want %v", i, path, got, w)
		}
	}
}

// incidentDoc is the incident as its --json output is read.
func incidentDoc(t *testing.T, inc *Incident) map[string]any {
	b, err := json.Marshal(inc)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func lookupPath(doc map[string]any, path string) (any, bool) {
	var cur any = doc
	for _, k := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

var reLabelSize = regexp.MustCompile(`^([0-9.]+) ?(bytes|B|kB|KB|KiB|MiB|GiB|TiB|MB|GB)$`)

var labelUnits = map[string]float64{"bytes": 1, "B": 1, "kB": 1024, "KB": 1024, "KiB": 1024, "MiB": 1 << 20,
	"GiB": 1 << 30, "TiB": 1 << 40, "MB": 1 << 20, "GB": 1 << 30}

// sameFigure compares a label with the parsed value: sizes given as
// printed ("1.40 GiB", "102400kB") within 1%, anything else exactly.
func sameFigure(got any, ok bool, want any) bool {
	if !ok {
		return want == nil
	}
	if s, isStr := want.(string); isStr {
		if m := reLabelSize.FindStringSubmatch(s); m != nil {
			f, _ := strconv.ParseFloat(m[1], 64)
			w := f * labelUnits[m[2]]
			g, isNum := got.(float64)
			return isNum && math.Abs(g-w) <= 0.01*math.Max(w, 1)+1
		}
	}
	return fmt.Sprint(got) == fmt.Sprint(want)
}

func kindsOf(incs []Incident) string {
	var s []string
	for _, inc := range incs {
		s = append(s, string(inc.Kind))
	}
	return "[" + strings.Join(s, " ") + "]"
}

func wantKinds(fs []corpusFinding) string {
	var s []string
	for _, f := range fs {
		s = append(s, string(f.Kind))
	}
	return "[" + strings.Join(s, " ") + "]"
}
