package snapshot

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// Seeds and inputs stay small: the fuzzer minimises every input that finds
// new code before it goes on, and one grown from a 30-60 KB real snapshot
// took it longer than a whole 30 s run (a dozen execs in 30 s, against
// thousands a second with these bounds). The formats' files (< 2 KB) cover
// every layout; the real snapshots are table-tested instead.
const (
	maxSeed  = 4 << 10
	maxInput = 16 << 10
)

func addSeeds(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "formats", "*.pickle"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && len(b) <= maxSeed {
			f.Add(b)
		}
	}
}

// FuzzRead: any bytes give a snapshot or an error, never a panic.
func FuzzRead(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > maxInput {
			return
		}
		_, _ = ReadAny(bytes.NewReader(b), int64(len(b)))
	})
}

// fuzzSnapshot runs analysis on whatever decodes: hostile numbers
// (negative sizes, huge totals, unknown states) must not panic.
func fuzzSnapshot(f *testing.F, analysis func(*Snapshot)) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > maxInput {
			return
		}
		// The size is known, as for a file: no 1 MiB read-ahead buffers per
		// exec (the analyses are what these targets are for).
		if s, err := ReadAny(bytes.NewReader(b), int64(len(b))); err == nil {
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
