package kmsg

import (
	"bytes"
	"testing"
)

func FuzzParseLine(f *testing.F) {
	for _, s := range []string{
		"[  816.908500] Memory cgroup out of memory: Killed process 19335 (python3)",
		"[Sun Nov 29 22:44:14 2026] python3 invoked oom-killer:",
		"[四 3月 18 18:47:12 2021] Task in /a killed as a result of limit of /a",
		"2026-11-29T22:44:14,845852+00:00 python3 invoked oom-killer:",
		"kern  :warn  : [ 1043.845852] x", "<4>[ 1043.845852] x", "4,664,1043845852,-;x\\x0ay",
		"May  6 10:02:51 h kernel: [1467990.340288] Killed", "/var/log/messages:Nov 29 22:31:42 h kernel: x",
		`{"MESSAGE":[104,105],"__REALTIME_TIMESTAMP":"1"}`, "[  244.9][ T3106] x",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		l := ParseLine(b, ParseOptions{})
		if !l.Prefixed && l.Text != string(b) {
			t.Fatalf("unprefixed line changed: %q -> %q", b, l.Text)
		}
		if i := SplitGlued(b); i >= len(b) {
			t.Fatalf("split %d beyond %d", i, len(b))
		}
	})
}

func FuzzScanner(f *testing.F) {
	f.Add([]byte("a\nb\r\nc\rd\n"), 4)
	f.Fuzz(func(t *testing.T, b []byte, max int) {
		max = max%4096 + 1
		if max < 1 {
			max += 4096
		}
		sc := NewScanner(bytes.NewReader(b), max)
		for sc.Scan() {
			if len(sc.Bytes()) > max {
				t.Fatalf("line of %d > %d", len(sc.Bytes()), max)
			}
		}
	})
}
