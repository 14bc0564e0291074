package supervisor

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSweepStaleOnlyDeadOwners(t *testing.T) {
	proc, tmp := t.TempDir(), t.TempDir()
	stat := func(state string) string {
		return "4242 (torchmem) " + state + " 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 3 0 777 0 0 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	}
	os.MkdirAll(filepath.Join(proc, "4242"), 0o755)
	for _, c := range []struct {
		name, state string
		o           owner
		swept, kept bool // dir removed; owner file removed but dir kept
	}{
		{"alive", "S", owner{PID: 4242, Start: 777}, false, false},
		{"zombie", "Z", owner{PID: 4242, Start: 777}, true, false},
		{"pid reused", "S", owner{PID: 4242, Start: 1}, true, false},
		{"gone", "S", owner{PID: 4343, Start: 777}, true, false},
		{"gone, --keep-hook-dir", "S", owner{PID: 4343, Start: 777, KeepDir: true}, false, true},
	} {
		os.WriteFile(filepath.Join(proc, "4242", "stat"), []byte(stat(c.state)), 0o644)
		dir := filepath.Join(tmp, "torchmem-abc-1")
		os.MkdirAll(dir, 0o700)
		b, _ := json.Marshal(c.o)
		os.WriteFile(filepath.Join(dir, ownerFile), b, 0o600)
		lines := SweepStale(proc, tmp)
		_, dirErr := os.Stat(dir)
		_, ownErr := os.Stat(filepath.Join(dir, ownerFile))
		if swept := os.IsNotExist(dirErr); swept != c.swept || (c.kept && (dirErr != nil || !os.IsNotExist(ownErr))) {
			t.Errorf("%s: dir removed %v (want %v), owner file %v, lines %q", c.name, swept, c.swept, ownErr, lines)
		}
		if (c.swept || c.kept) != (len(lines) == 1 && strings.Contains(lines[0], "cleaned up after supervisor")) {
			t.Errorf("%s: lines %q", c.name, lines)
		}
		os.RemoveAll(dir)
	}
}

// TestReap: the reaper waits while its supervisor lives, cleans up the
// moment it is gone, and does nothing when the record was removed (a
// normal end).
func TestReap(t *testing.T) {
	proc, tmp := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(proc, "4242"), 0o755)
	writeStat := func(state string) {
		os.WriteFile(filepath.Join(proc, "4242", "stat"), []byte("4242 (torchmem) "+state+" 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 3 0 777 0 0 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"), 0o644)
	}
	writeStat("S")
	dir := filepath.Join(tmp, "torchmem-abc-1")
	os.MkdirAll(dir, 0o700)
	path := filepath.Join(dir, ownerFile)
	b, _ := json.Marshal(owner{PID: 4242, Start: 777})
	os.WriteFile(path, b, 0o600)
	done := make(chan string, 1)
	go func() { done <- Reap(context.Background(), proc, path) }()
	select {
	case line := <-done:
		t.Fatalf("reaped a live supervisor: %q", line)
	case <-time.After(3 * reapPoll):
	}
	writeStat("Z") // the supervisor died
	select {
	case line := <-done:
		if _, err := os.Stat(dir); !os.IsNotExist(err) || !strings.Contains(line, "cleaned up after supervisor 4242") {
			t.Errorf("line %q, run directory %v", line, err)
		}
	case <-time.After(10 * reapPoll):
		t.Fatal("the reaper did not notice its supervisor's death")
	}
	if line := Reap(context.Background(), proc, path); line != "" {
		t.Errorf("no record, yet %q", line)
	}
}
