package snapshot

import (
	"bytes"
	"io"
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

// fuzzSnapshot runs analysis on whatever decodes: hostile numbers
// (negative sizes, huge totals, unknown states) must not panic.
func fuzzSnapshot(f *testing.F, analysis func(*Snapshot)) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := ReadAny(bytes.NewReader(b), -1); err == nil {
			analysis(s)
		}
	})
}

func FuzzSummary(f *testing.F) {
	fuzzSnapshot(f, func(s *Snapshot) { _ = Summarize(s); _ = MemoryVizStats(s) })
}

func FuzzTop(f *testing.F) { fuzzSnapshot(f, func(s *Snapshot) { _ = TopSites(s, 2) }) }

func FuzzLeaks(f *testing.F) { fuzzSnapshot(f, func(s *Snapshot) { _ = FindLeaks(s, LeakOptions{}) }) }

func FuzzDiff(f *testing.F) { fuzzSnapshot(f, func(s *Snapshot) { _ = Compare(s, s, 1) }) }

func FuzzTimeline(f *testing.F) {
	fuzzSnapshot(f, func(s *Snapshot) {
		for dev := range s.Traces {
			tl := BuildTimeline(s, dev)
			_ = tl.Buckets(0, tl.Entries, 50)
		}
	})
}

func FuzzHTML(f *testing.F) {
	fuzzSnapshot(f, func(s *Snapshot) { _, _ = WriteHTML(io.Discard, s, HTMLOptions{}) })
}
