package procfs

import (
	"os"
	"strings"
	"testing"
)

// Lines in the layout of a DataLoader main process's maps (torch's
// file_descriptor strategy, two batches in flight): only the /dev/shm
// lines count, and one file mapped twice keeps one key.
func TestParseShmMaps(t *testing.T) {
	in := `55d0c5c00000-55d0c5c6b000 r--p 00000000 08:01 1835214                    /usr/bin/python3.11
7f1c8a000000-7f1c8c000000 rw-s 00000000 00:1a 4189                       /dev/shm/torch_1234_567_0 (deleted)
7f1c8c000000-7f1c8c400000 rw-s 00000000 00:1a 4190                       /dev/shm/torch_1234_568_1 (deleted)
7f1c8e000000-7f1c90000000 rw-s 00000000 00:1a 4189                       /dev/shm/torch_1234_567_0 (deleted)
7f1c9b3c7000-7f1c9b3e8000 r--p 00000000 08:01 2101318                    /usr/lib/python3/dist-packages/torch/lib/libtorch_python.so
7ffd2b1f2000-7ffd2b213000 rw-p 00000000 00:00 0                          [stack]
garbage /dev/shm/x
`
	got, err := parseShmMaps(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []ShmMap{{"00:1a 4189", 32 << 20}, {"00:1a 4190", 4 << 20}, {"00:1a 4189", 32 << 20}}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: %v, want %v", i, got[i], want[i])
		}
	}
}

func FuzzParseShmMaps(f *testing.F) {
	f.Add("7f1c8a000000-7f1c8c000000 rw-s 00000000 00:1a 4189 /dev/shm/torch_1_2_0 (deleted)\n")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = parseShmMaps(strings.NewReader(s))
	})
}

// testdata/maps-dataloader-main: a real excerpt (every /dev/shm line, the
// first lines and the libtorch lines) of the main process's maps while a
// torch 1.13 DataLoader with 3 workers ran (Debian 12 python3-torch): one
// 16 MiB batch in flight and the workers' semaphores (one page each).
func TestShmMapsRealDataLoader(t *testing.T) {
	f, err := os.Open("testdata/maps-dataloader-main")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := parseShmMaps(f)
	if err != nil {
		t.Fatal(err)
	}
	var sum uint64
	for _, m := range got {
		sum += m.Bytes
	}
	if len(got) != 18 || sum != 16<<20+17*4096 {
		t.Errorf("%d mappings, %d bytes: %v", len(got), sum, got)
	}
}
