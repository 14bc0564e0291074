package lint

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// nproc over limits text read by procfs's parser (header optional).
func TestParseLimitsNproc(t *testing.T) {
	parse := func(text string) (*uint64, bool, error) {
		proc := t.TempDir()
		os.MkdirAll(filepath.Join(proc, "self"), 0o755)
		os.WriteFile(filepath.Join(proc, "self", "limits"), []byte(text), 0o644)
		l, err := readSelfLimits(proc)
		if err != nil {
			return nil, false, err
		}
		return nproc(l)
	}
	data, err := os.ReadFile("testdata/host/limits")
	if err != nil {
		t.Fatal(err)
	}
	v, unlimited, err := parse(string(data))
	if err != nil || unlimited || v == nil || *v != 4096 {
		t.Fatalf("got %v %v %v, want soft limit 4096", v, unlimited, err)
	}
	v, unlimited, err = parse("Max processes             unlimited            unlimited            processes\n")
	if err != nil || !unlimited || v != nil {
		t.Fatalf("unlimited: got %v %v %v", v, unlimited, err)
	}
	if _, _, err = parse("Max open files 1 1 files\n"); err == nil {
		t.Fatal("no Max processes line: want an error")
	}
	if _, _, err = parse("Max processes  lots  lots processes\n"); err == nil {
		t.Fatal("bad number: want an error")
	}
}

func TestReadHostFromRoots(t *testing.T) {
	proc := t.TempDir()
	os.MkdirAll(filepath.Join(proc, "self"), 0o755)
	data, _ := os.ReadFile("testdata/host/limits")
	os.WriteFile(filepath.Join(proc, "self", "limits"), data, 0o644)
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "dev", "shm"), 0o755)
	os.WriteFile(filepath.Join(proc, "self", "status"), []byte("Name:\tpython3\nUid:\t1000\t1000\t1000\t1000\n"), 0o644)
	h := ReadHost(proc, root)
	if h.RootUser {
		t.Error("uid 1000 read as root")
	}
	os.WriteFile(filepath.Join(proc, "self", "status"), []byte("Uid:\t0\t0\t0\t0\n"), 0o644)
	if !ReadHost(proc, root).RootUser {
		t.Error("uid 0 not read as root")
	}
	os.WriteFile(filepath.Join(proc, "self", "status"), []byte("Uid:\t1000\t1000\t1000\t1000\n"), 0o644)
	h = ReadHost(proc, root)
	if h.MaxProcs == nil || *h.MaxProcs != 4096 || h.ShmBytes == nil || h.Note != "" {
		t.Fatalf("got %+v", h)
	}
	h = ReadHost(filepath.Join(proc, "missing"), filepath.Join(root, "missing"))
	if h.MaxProcs != nil || h.ShmBytes != nil || !strings.Contains(h.Note, "limits") || !strings.Contains(h.Note, "shm") {
		t.Fatalf("missing roots: got %+v", h)
	}
}

func TestSuppressed(t *testing.T) {
	lines := []string{
		"total += loss  # torchmem: ignore[TM002]",
		"total += loss  # torchmem: ignore",
		"total += loss  # torchmem: ignore[TM010, accumulated-autograd-history]",
		"total += loss  # torchmem: ignore[TM010]",
		"total += loss",
		"total += loss  # noqa: TM002",
		"total += loss  # noqa",
		"total += loss  # NOQA:E501,TM002",
		"total += loss  # noqa: E501",
		"total += loss  # noqa: F401 accumulated-autograd-history is fine here",
		"total += loss  # noqa: TM010",
	}
	cases := []struct {
		line int
		want bool
	}{{1, true}, {2, true}, {3, true}, {4, false}, {5, false}, {6, true}, {7, true}, {8, true},
		{9, false}, {10, true}, {11, false}, {12, false}}
	for _, c := range cases {
		if got := suppressed(lines, c.line, "TM002"); got != c.want {
			t.Errorf("line %d: got %v want %v", c.line, got, c.want)
		}
	}
}

func TestConfig(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "src", "pkg")
	os.MkdirAll(sub, 0o755)
	os.WriteFile(filepath.Join(dir, "pyproject.toml"), []byte(`
[project]
name = "x"

[tool.torchmem]
disable = ["TM009", "torch-load-without-map-location"]
severity = { TM005 = "error", "empty-cache-in-loop" = "error" }
`), 0o644)
	// A closer pyproject without [tool.torchmem] does not hide the outer one.
	os.WriteFile(filepath.Join(dir, "src", "pyproject.toml"), []byte("[project]\nname = \"inner\"\n"), 0o644)
	cf := &configFinder{byDir: map[string]*Config{}}
	c, err := cf.forFile(filepath.Join(sub, "train.py"))
	if err != nil || c == nil {
		t.Fatalf("config: %v %v", c, err)
	}
	if ok, _ := c.allows("TM009", SevInfo); ok {
		t.Error("TM009 should be disabled")
	}
	if ok, _ := c.allows("TM011", SevWarning); ok {
		t.Error("TM011 (by name) should be disabled")
	}
	if ok, sev := c.allows("TM005", SevWarning); !ok || sev != SevError {
		t.Errorf("TM005: %v %s", ok, sev)
	}
	os.WriteFile(filepath.Join(sub, "pyproject.toml"), []byte("[tool.torchmem]\nenable = [\"TM999\"]\n"), 0o644)
	cf = &configFinder{byDir: map[string]*Config{}}
	if _, err := cf.forFile(filepath.Join(sub, "train.py")); err == nil || !strings.Contains(err.Error(), "TM999") {
		t.Fatalf("unknown rule: err %v", err)
	}
	os.WriteFile(filepath.Join(sub, "pyproject.toml"), []byte("[tool.torchmem]\nenable = [\"TM001\"]\nseverity = { TM001 = \"fatal\" }\n"), 0o644)
	cf = &configFinder{byDir: map[string]*Config{}}
	if _, err := cf.forFile(filepath.Join(sub, "train.py")); err == nil || !strings.Contains(err.Error(), "fatal") {
		t.Fatalf("bad severity: err %v", err)
	}
}

func TestSARIFShape(t *testing.T) {
	fs := []Finding{{File: "train.py", Line: 3, Col: 5, Rule: "TM002", Severity: SevError, Message: "m", Fix: "f"}}
	data, err := json.Marshal(SARIF(fs, "v1"))
	if err != nil {
		t.Fatal(err)
	}
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Rules []struct{ ID string } `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				RuleIndex int    `json:"ruleIndex"`
				Level     string `json:"level"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }                 `json:"artifactLocation"`
						Region           struct{ StartLine, StartColumn int } `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(data, &log); err != nil {
		t.Fatal(err)
	}
	r := log.Runs[0].Results[0]
	loc := r.Locations[0].PhysicalLocation
	if log.Version != "2.1.0" || r.RuleID != "TM002" || r.Level != "error" ||
		log.Runs[0].Tool.Driver.Rules[r.RuleIndex].ID != "TM002" ||
		loc.ArtifactLocation.URI != "train.py" || loc.Region.StartLine != 3 || loc.Region.StartColumn != 5 {
		t.Fatalf("unexpected SARIF: %s", data)
	}
}

func TestWalkSkipsVenvAndGit(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"a.py", "pkg/b.py", ".git/c.py", "venv/lib/d.py", "myenv/e.py", "notes.txt"} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
		os.WriteFile(filepath.Join(dir, p), []byte("x = 1\n"), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "myenv", "pyvenv.cfg"), []byte("home = /usr/bin\n"), 0o644)
	got, err := expandPaths([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "a.py"), filepath.Join(dir, "pkg", "b.py")}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("got %v want %v", got, want)
	}
	if _, err := expandPaths([]string{filepath.Join(dir, "missing.py")}); err == nil {
		t.Fatal("missing path: want an error")
	}
}

func TestBatchesOf(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for i := 0; i < 901; i++ {
		p := filepath.Join(dir, fmt.Sprintf("f%03d.py", i))
		os.WriteFile(p, []byte("x = 1\n"), 0o644)
		files = append(files, p)
	}
	b := batchesOf(files)
	if len(b) != 3 || len(b[0]) != 400 || len(b[2]) != 101 {
		t.Fatalf("got %d batches", len(b))
	}
	big := filepath.Join(dir, "big.py")
	os.WriteFile(big, make([]byte, batchBytes), 0o644)
	if b := batchesOf([]string{files[0], big, files[1]}); len(b) != 2 || len(b[0]) != 2 {
		t.Fatalf("size cut: %v", b)
	}
	if len(batchesOf(nil)) != 0 {
		t.Fatal("no files, no batches")
	}
}

func TestCharColumn(t *testing.T) {
	f := &file{lines: []string{`état = {"clé": torch.load("x")}`}}
	// "torch" starts at byte 18 (0-based) but character 16.
	if got := f.charCol(1, 19); got != 17 {
		t.Fatalf("char column %d, want 17", got)
	}
	if got := f.charCol(5, 3); got != 3 {
		t.Fatalf("out of range line: %d", got)
	}
}
