package snapshot

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func addSeeds(f *testing.F) {
	for _, dir := range []string{"formats", "real"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.pickle"))
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil && len(b) < 64<<10 {
				f.Add(b)
			}
		}
	}
}

// FuzzRead: any bytes give a snapshot or an error, never a panic.
func FuzzRead(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ReadAny(bytes.NewReader(b), int64(len(b)))
	})
}

// FuzzAnalyses runs every analysis on whatever decodes: hostile numbers
// (negative sizes, huge totals, unknown states) must not panic.
func FuzzAnalyses(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ReadAny(bytes.NewReader(b), -1)
		if err != nil {
			return
		}
		_ = Summarize(s)
		_ = TopSites(s, 2)
		_ = FindLeaks(s, LeakOptions{})
		_ = Compare(s, s, 1)
		for dev := range s.Traces {
			tl := BuildTimeline(s, dev)
			_ = tl.Buckets(0, tl.Entries, 50)
		}
	})
}
