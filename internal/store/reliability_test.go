package store

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// reliability logs the line bench/reliability.sh turns into a table row.
func reliability(t *testing.T, check, expected, observed string) {
	t.Helper()
	t.Logf("RELIABILITY|%s|%s|%s", check, expected, observed)
}

// A supervisor that died but was not reaped yet (state Z) or is being
// removed (X) must count as gone: `runs` showed it running until reaped.
func TestReliabilityZombieSupervisorIsDead(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "4242"), 0o755)
	os.MkdirAll(filepath.Join(dir, "sys/kernel/random"), 0o755)
	os.WriteFile(filepath.Join(dir, "sys/kernel/random/boot_id"), []byte("boot-a\n"), 0o644)
	stat := "4242 (torchmem) %s 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 3 0 8374612 0 0 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	var got []string
	for state, alive := range map[string]bool{"S": true, "R": true, "D": true, "T": true, "Z": false, "X": false, "x": false} {
		os.WriteFile(filepath.Join(dir, "4242/stat"), []byte(strings.Replace(stat, "%s", state, 1)), 0o644)
		if a := supervisorAlive(procsAt(t, dir), bootID(procsAt(t, dir)), 4242, 8374612, "boot-a"); a != alive {
			t.Errorf("state %s: alive=%v, want %v", state, a, alive)
		}
		if !alive {
			got = append(got, state)
		}
	}
	// A real zombie: a child that exited and that nobody waited for.
	cmd := exec.Command("/bin/true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	pid := cmd.Process.Pid
	host := procsAt(t, "/proc")
	start, err := procStartTime(host, pid)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for supervisorAlive(host, bootID(host), pid, start, bootID(host)) {
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			t.Fatalf("zombie pid %d still alive after 5 s (%s)", pid, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
	st, _ := host.Stat(pid)
	slices.Sort(got)
	reliability(t, "zombie supervisor counts as dead", "dead: states X,Z,x and a real unreaped child",
		fmt.Sprintf("dead: states %s and a real unreaped child (state %s)", strings.Join(got, ","), st.State))
}
