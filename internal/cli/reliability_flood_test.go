package cli

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/store"
)

// floodScript speaks the hook protocol on the run's socket from 4
// processes of the job for argv[1] seconds: 60 KB exceptions, notices,
// OOM snapshot paths and ack errors, steps, hellos with huge argv, unknown
// types and 2 MB lines. It prints how many bytes it sent.
const floodScript = `import json, os, socket, sys, time
sock = os.environ["TORCHMEM_HOOK_SOCKET"]
for _ in range(2):
    os.fork()
s = socket.socket(socket.AF_UNIX)
s.connect(sock)
end, big, sent, i = time.time() + float(sys.argv[1]), "x" * 60000, 0, 0
while time.time() < end:
    i += 1
    t = "%d-%d-%s" % (os.getpid(), i, big)
    for m in ({"type": "exception", "exc_type": t, "text": t, "thread": t},
              {"type": "notice", "text": t},
              {"type": "oom", "device": 0, "alloc": 1, "snapshot": t, "snapshot_error": t},
              {"type": "ack", "id": i, "cmd": t, "ok": False, "error": t},
              {"type": "step", "t": i, "step": i, "steps": 1, "step_seconds": 0.01, "cuda_initialized": False},
              {"type": "hello", "pid": os.getpid(), "torch": t, "python": t, "argv": [t] * 20, "step_hook": "none"},
              {"type": "from-the-future", "blob": t}):
        m["v"] = 1
        line = (json.dumps(m) + "\n").encode()
        s.sendall(line)
        sent += len(line)
    s.sendall(b'{"v":1,"type":"notice","text":"' + b"y" * (2 << 20) + b'"}\n')
    sent += 2 << 20
print(sent)
`

// statusKB reads a "Name:   123 kB" field of /proc/PID/status.
func statusKB(pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n
		}
	}
	return -1
}

func dbBytes(db string) int64 {
	var n int64
	for _, suf := range []string{"", "-wal", "-shm"} {
		if fi, err := os.Stat(db + suf); err == nil {
			n += fi.Size()
		}
	}
	return n
}

func TestReliabilityHookFloodIsBounded(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 to flood the hook socket")
	}
	bin, dir := reliabilityBuild(t)
	db := filepath.Join(dir, "flood.db")
	const secs = 15
	cmd := exec.Command(bin, "run", "--db", db, "--", py, "-c", floodScript, strconv.Itoa(secs))
	var out, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	time.Sleep(500 * time.Millisecond)
	base := statusKB(pid, "VmRSS")
	done := make(chan error)
	go func() { done <- cmd.Wait() }()
	var hwm, dbMax int64
	for polling := true; polling; {
		select {
		case err = <-done:
			polling = false
		case <-time.After(200 * time.Millisecond):
			hwm = max(hwm, statusKB(pid, "VmHWM"))
			dbMax = max(dbMax, dbBytes(db))
		}
	}
	dbMax = max(dbMax, dbBytes(db))
	if err != nil {
		t.Fatalf("torchmem run: %v\n%s", err, stderr.String())
	}
	var sent int64 // each of the 4 processes prints its count
	for _, f := range strings.Fields(out.String()) {
		n, _ := strconv.ParseInt(f, 10, 64)
		sent += n
	}
	growthMB, dbMB := float64(hwm-base)/1024, float64(dbMax)/(1<<20)
	if base <= 0 || hwm <= 0 || growthMB > 200 || dbMB > 20 {
		t.Errorf("RSS %d kB at start, peak %d kB (growth %.0f MB); DB %.1f MB", base, hwm, growthMB, dbMB)
	}
	h, err := store.Open(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	r, err := h.Run("last")
	if err != nil {
		t.Fatal(err)
	}
	n, _ := h.CountEvents(r.ID, "budget")
	if n != 1 || !strings.Contains(stderr.String(), "the job sent more than torchmem keeps; dropped:") {
		t.Errorf("budget events %d; stderr:\n%s", n, tail(stderr.String(), 2000))
	}
	evs, _ := h.Events(r.ID)
	reliability(t, "hook flood bounded", "supervisor RSS growth < 200 MB, DB < 20 MB, one budget event",
		fmt.Sprintf("4 processes sent %.1f GB in %d s: RSS %.0f MB at start, peak %.0f MB (+%.0f MB); DB %.1f MB, %d events; budget events %d",
			float64(sent)/1e9, secs, float64(base)/1024, float64(hwm)/1024, growthMB, dbMB, len(evs), n))
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
