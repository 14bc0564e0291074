package snapshot

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"testing"
)

// BenchmarkReadTrain decodes the real 3.5 MB GPT-2 training snapshot from
// memory (the gzip is expanded once, outside the timing).
func BenchmarkReadTrain(b *testing.B) {
	f, err := os.Open("testdata/real/train_gpt2_bf16.pickle.gz")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Read(bytes.NewReader(raw), int64(len(raw)), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadLarge reads the file named by TORCHMEM_BENCH_SNAPSHOT
// (written by bench/snapshotgen) and summarizes it; skipped without one.
func BenchmarkReadLarge(b *testing.B) {
	path := os.Getenv("TORCHMEM_BENCH_SNAPSHOT")
	if path == "" {
		b.Skip("set TORCHMEM_BENCH_SNAPSHOT to a snapshot file (see bench/snapshot.sh)")
	}
	for b.Loop() {
		s, err := ReadFile(path, nil)
		if err != nil {
			b.Fatal(err)
		}
		_ = Summarize(s)
	}
}
