package tui

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/sample/sampletest"
)

// A job's /dev/shm is the sum of the distinct files its processes map:
// the batch the main process and a worker both map counts once. The maps
// lines are the real DataLoader excerpt's (internal/procfs/testdata).
func TestGatherShmPerJob(t *testing.T) {
	s, tree := fixtureTree(t, 2)
	shared := "7f516b000000-7f516c000000 rw-s 00000000 00:1b 298960                     /dev/shm/torch_22840_3371108312_21 (deleted)\n"
	sem := "7f5194214000-7f5194215000 rw-s 00000000 00:1b 298861                     /dev/shm/sem.PvmHds (deleted)\n"
	own := "7f5178787000-7f5179787000 rw-s 00000000 00:1b 298887                     /dev/shm/torch_22840_146566295_8 (deleted)\n"
	write := func(pid int, text string) {
		path := filepath.Join(tree.ProcRoot, strconv.Itoa(pid), "maps")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, text...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(sampletest.MainPID, shared+sem)
	write(sampletest.MainPID+1, shared+own)
	smp, err := s.Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1000, 0)
	g, err := newGatherer(tree.ProcRoot, t.TempDir(), func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	e := g.gather(smp)
	got := e.Jobs[smp.Jobs[0].ID].ShmBytes
	if want := uint64(16<<20 + 4096 + 16<<20); got == nil || *got != want {
		t.Errorf("job shm = %v, want %d (16 MiB shared once, a semaphore page, a worker's own 16 MiB)", got, want)
	}
	if e.HostShm != nil {
		t.Errorf("a root without /dev/shm has host shm %+v", e.HostShm)
	}
	if pe := e.Procs[sampletest.MainPID]; pe.State != "S" || pe.CPUPercent != nil || pe.StartTicks == 0 {
		t.Errorf("main process on its first read: %+v", pe)
	}
	if h := e.Jobs[smp.Jobs[0].ID].History; len(h) != 1 || h[0] != smp.Jobs[0].Totals.RSSBytes {
		t.Errorf("history %v", h)
	}
}
