package store

import (
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/procfs"
)

// The child half of TestCrashLeavesReadableDB: write as fast as possible,
// flushing often, until killed.
func init() {
	path := os.Getenv("TORCHMEM_STORE_CRASH_CHILD")
	if path == "" {
		return
	}
	db, err := Open(path, Options{FlushInterval: 20 * time.Millisecond, Tiers: []Tier{{After: 0, Width: 50 * time.Millisecond}}})
	if err != nil {
		os.Exit(3)
	}
	r := &Run{Command: []string{"crash-child"}}
	if err := db.CreateRun(r); err != nil {
		os.Exit(4)
	}
	for i := int64(0); ; i++ {
		db.AppendSample(r.ID, Sample{Time: time.Now(), CgroupUsage: Int(i), GPUUsed: []*int64{Int(i)}})
		if i%7 == 0 {
			db.AppendEvent(r.ID, Event{Time: time.Now(), Kind: "tick", Source: "test", Message: "x"})
		}
		if i%50 == 0 {
			db.compactActive(false) // compaction too may be interrupted
		}
	}
}

func TestCrashLeavesReadableDB(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a writer process")
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	for round := 0; round < 3; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "TORCHMEM_STORE_CRASH_CHILD="+path)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitForSamples(t, path, round+1)
		time.Sleep(time.Duration(round*37) * time.Millisecond) // kill at different points
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
	}
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("reopen after SIGKILL: %v", err)
	}
	defer db.Close()
	var check string
	if err := db.SQL().QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check = %q, %v", check, err)
	}
	runs, err := db.Runs(RunFilter{})
	if err != nil || len(runs) != 3 {
		t.Fatalf("runs after crashes: %d, %v", len(runs), err)
	}
	for _, r := range runs {
		if r.Status != StatusSupervisorLost || r.End == nil {
			t.Errorf("run %s: status %q end %v, want supervisor lost with an end", r.ID, r.Status, r.End)
		}
		s, err := db.Samples(r.ID, time.Time{}, time.Time{}, 0)
		if err != nil || len(s) == 0 {
			t.Errorf("run %s: %d samples, %v", r.ID, len(s), err)
		}
	}
}

// waitForSamples waits until runs runs have samples on disk.
func waitForSamples(t *testing.T, path string, runs int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		db, err := sql.Open("sqlite", dsn(path, true))
		if err != nil {
			continue
		}
		var n int
		err = db.QueryRow(`SELECT COUNT(DISTINCT run) FROM samples`).Scan(&n)
		db.Close()
		if err == nil && n >= runs {
			return
		}
	}
	t.Fatal("the writer wrote nothing in 20 s")
}

// procsAt is the procfs reader of a fixture proc tree, as Options.Procs.
func procsAt(t *testing.T, root string) Procs {
	t.Helper()
	fs, err := procfs.NewFS(root)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestSupervisorIdentity(t *testing.T) {
	dir := t.TempDir()
	pid := 4242
	os.MkdirAll(filepath.Join(dir, "4242"), 0o755)
	os.MkdirAll(filepath.Join(dir, "sys/kernel/random"), 0o755)
	os.WriteFile(filepath.Join(dir, "sys/kernel/random/boot_id"), []byte("boot-a\n"), 0o644)
	stat := "4242 (torch mem) (x) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 3 0 8374612 3133440 411 18446744073709551615 93967881076736 93967881096617 140721594126976 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 93967881112624 93967881114240 93968872951808 140721594129082 140721594129102 140721594129102 140721594130411 0\n"
	os.WriteFile(filepath.Join(dir, "4242/stat"), []byte(stat), 0o644)
	if st, err := procStartTime(procsAt(t, dir), pid); err != nil || st != 8374612 {
		t.Fatalf("start time %d, %v", st, err)
	}
	cases := []struct {
		name  string
		pid   int
		start uint64
		boot  string
		alive bool
	}{
		{"same process", 4242, 8374612, "boot-a", true},
		{"pid reused", 4242, 111, "boot-a", false},
		{"pid gone", 4343, 8374612, "boot-a", false},
		{"rebooted", 4242, 8374612, "boot-b", false},
		{"not recorded", 0, 0, "", true},
	}
	for _, c := range cases {
		if got := supervisorAlive(procsAt(t, dir), bootID(procsAt(t, dir)), c.pid, c.start, c.boot); got != c.alive {
			t.Errorf("%s: alive=%v, want %v", c.name, got, c.alive)
		}
	}
	for _, bad := range []string{"", "12 (x", "1 (a) S 2 3"} {
		os.WriteFile(filepath.Join(dir, "4242/stat"), []byte(bad), 0o644)
		if _, err := procStartTime(procsAt(t, dir), pid); err == nil {
			t.Errorf("stat %q accepted", bad)
		}
	}
}

func TestGPUColumnRoundTrip(t *testing.T) {
	used := []*int64{Int(0), nil, Int(150109880320)}
	job := []*int64{Int(4 << 30)}
	u, j, err := decodeGPU(encodeGPU(used, job))
	if err != nil || len(u) != 3 || *u[0] != 0 || u[1] != nil || *u[2] != 150109880320 || len(j) != 1 || *j[0] != 4<<30 {
		t.Fatalf("round trip: %v %v %v", u, j, err)
	}
	if encodeGPU(nil, nil) != nil {
		t.Fatal("empty series should store NULL")
	}
	for _, bad := range [][]byte{{2}, {1}, {1, 5, 0}, {1, 0xff, 0xff, 0xff, 0xff, 0x7f}} {
		if _, _, err := decodeGPU(bad); err == nil {
			t.Errorf("decodeGPU(%v) accepted", bad)
		}
	}
}

func FuzzDecodeGPU(f *testing.F) {
	f.Add(encodeGPU([]*int64{Int(1), nil}, []*int64{Int(2)}))
	f.Fuzz(func(t *testing.T, b []byte) { _, _, _ = decodeGPU(b) })
}
