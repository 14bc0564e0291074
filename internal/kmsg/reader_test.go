package kmsg

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

func TestScannerBoundsLines(t *testing.T) {
	in := strings.Repeat("x", 1<<20) + "\nshort\r\n 10%|#  \r 20%|##  \rdone\nlast"
	sc := NewScanner(strings.NewReader(in), 1024)
	var got []string
	var trunc []bool
	for sc.Scan() {
		got = append(got, string(sc.Bytes()))
		trunc = append(trunc, sc.Truncated())
	}
	if len(got) != 4 || len(got[0]) != 1024 || !trunc[0] || got[1] != "short" || got[2] != "done" || got[3] != "last" || trunc[1] {
		t.Fatalf("lines %q... trunc %v", got[1:], trunc)
	}
	if sc.LineNo() != 4 || sc.Err() != nil {
		t.Errorf("line %d err %v", sc.LineNo(), sc.Err())
	}
}

func TestBootTime(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/stat", []byte("cpu  1 2 3\nbtime 1764455211\nprocesses 9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bt, err := BootTime(dir)
	if err != nil || bt.Unix() != 1764455211 {
		t.Fatalf("boot %v err %v", bt, err)
	}
	if _, err := BootTime(dir + "/missing"); err == nil || !strings.Contains(err.Error(), "missing/stat") {
		t.Errorf("error should name the file: %v", err)
	}
}

// Reads this machine's kernel log through whichever source works.
func TestOpenLive(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	lines, src, err := ReadSince(ctx, Config{ProcRoot: "/proc"}, 0)
	if err != nil {
		t.Skipf("no kernel log readable here: %v", err)
	}
	if len(lines) == 0 || src == "" {
		t.Fatalf("%d lines from %q", len(lines), src)
	}
	if src == "/dev/kmsg" && (!lines[0].HasSeq || !lines[0].HasUptime || lines[0].Wall.IsZero()) {
		t.Errorf("kmsg line without seq/uptime/wall: %+v", lines[0])
	}
	// Since in the future, or only new lines: nothing old comes back.
	later, _, err := ReadSince(ctx, Config{ProcRoot: "/proc", Since: time.Now().Add(time.Hour)}, 0)
	if err != nil || len(later) != 0 {
		t.Errorf("since the future: %d lines, %v", len(later), err)
	}
	if src != "/dev/kmsg" {
		return
	}
	later, _, err = ReadSince(ctx, Config{ProcRoot: "/proc", OnlyNew: true, NoJournal: true, NoDmesg: true}, 0)
	if err != nil || len(later) != 0 {
		t.Errorf("only new: %d lines, %v", len(later), err)
	}
}

func TestFollowDevKmsg(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("writing to /dev/kmsg needs root")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := Open(ctx, Config{Follow: true, OnlyNew: true, NoJournal: true, NoDmesg: true})
	if err != nil {
		t.Skipf("/dev/kmsg: %v", err)
	}
	defer r.Close()
	marker := "torchmem-kmsg-test-" + time.Now().Format("150405.000000000")
	if err := os.WriteFile("/dev/kmsg", []byte(marker+"\n"), 0); err != nil {
		t.Skipf("write /dev/kmsg: %v", err)
	}
	for {
		ln, err := r.Next()
		if err != nil {
			t.Fatalf("follow ended before the marker: %v", err)
		}
		if bytes.Contains([]byte(ln.Text), []byte(marker)) {
			return
		}
	}
}

// Following without /dev/kmsg: a journalctl with no journal prints nothing
// and, with -f, never exits; Open must fall back to dmesg, not wait on it.
func TestFollowSkipsEmptyJournal(t *testing.T) {
	bin := t.TempDir()
	scripts := map[string]string{
		"journalctl": "#!/bin/sh\nfor a; do [ \"$a\" = -f ] && exec sleep 30; done\nexit 0\n",
		"dmesg":      "#!/bin/sh\necho '[    1.000000] Linux version 6.1'\nexec sleep 30\n",
	}
	for name, body := range scripts {
		if err := os.WriteFile(bin+"/"+name, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := Open(ctx, Config{DevKmsg: "-", Follow: true, ProcRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Source() != "dmesg" || ctx.Err() != nil {
		t.Errorf("source %q (ctx %v), want dmesg without waiting on journalctl -f", r.Source(), ctx.Err())
	}
}
