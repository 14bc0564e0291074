package psi

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readTestdata(t testing.TB, name string) string {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseCaptures(t *testing.T) {
	for _, tc := range []struct {
		file       string
		some, full uint64
	}{
		{"proc-pressure-memory.txt", 0, 0},      // H200 host, /proc/pressure/memory
		{"cgroup-v2-memory.pressure", 202, 202}, // a v2 group after an OOM kill
	} {
		p, err := Parse(readTestdata(t, tc.file))
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if p.Some == nil || p.Full == nil || p.Some.TotalMicros != tc.some || p.Full.TotalMicros != tc.full {
			t.Errorf("%s: got %+v %+v", tc.file, p.Some, p.Full)
		}
	}
}

func TestParseValuesAndErrors(t *testing.T) {
	p, err := Parse("some avg10=1.50 avg60=0.25 avg300=0.01 total=12345\n")
	if err != nil || p.Some.Avg10 != 1.5 || p.Some.Avg60 != 0.25 || p.Some.Avg300 != 0.01 || p.Full != nil {
		t.Fatalf("some only: %+v %v", p, err)
	}
	for in, want := range map[string]string{
		"":                                       "empty",
		"some":                                   "want avg10",
		"some avg10=x avg60=0 avg300=0 total=0":  `field "avg10=x"`,
		"half avg10=0 avg60=0 avg300=0 total=0":  "want some or full",
		"some avg10=0 avg60=0 avg300=0 total=-1": `field "total=-1"`,
		"some avg10 avg60=0 avg300=0 total=0":    "want key=value",
	} {
		if _, err := Parse(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want error with %q", in, err, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(readTestdata(f, "cgroup-v2-memory.pressure"))
	f.Add(readTestdata(f, "proc-pressure-memory.txt"))
	f.Fuzz(func(t *testing.T, s string) { _, _ = Parse(s) })
}
