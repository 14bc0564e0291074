package snapshot

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// bigPickle writes futurePickle entries to a file of at least mapMin bytes.
func bigPickle(t *testing.T) (string, []byte) {
	t.Helper()
	raw := futurePickle(100000)
	if len(raw) < mapMin {
		t.Fatalf("%d bytes: under mapMin, the test would not map it", len(raw))
	}
	path := filepath.Join(t.TempDir(), "big.pickle")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, raw
}

// TestReadFileMapped: a large plain file, decoded in place from its
// mapping, gives the snapshot a reader gives, and reports its progress.
func TestReadFileMapped(t *testing.T) {
	path, raw := bigPickle(t)
	var last, total int64
	mapped, err := ReadFile(path, func(read, tot int64) { last, total = read, tot })
	if err != nil {
		t.Fatal(err)
	}
	read, err := ReadAny(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(mapped, read) {
		t.Fatal("the mapped file decoded differently from the same bytes read")
	}
	if total != int64(len(raw)) || last < total/2 || last > total {
		t.Errorf("progress %d of %d, file %d bytes", last, total, len(raw))
	}
}

// TestReadMappedCut: a file cut after it was mapped faults on the first
// page past its new end; the decoder reports that instead of crashing.
func TestReadMappedCut(t *testing.T) {
	path, _ := bigPickle(t)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	data, ok := mapPickle(f, st)
	if !ok {
		t.Fatal("not mapped")
	}
	defer unmapPickle(data)
	if err := os.Truncate(path, 1<<20); err != nil {
		t.Fatal(err)
	}
	if _, err := readMapped(data, nil); err == nil || !strings.Contains(err.Error(), "cut while it was read") {
		t.Fatalf("err = %v", err)
	}
}
