package procfs

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func FuzzParseStatus(f *testing.F) {
	for _, p := range []string{"proc/517/status", "proc/4242/status"} {
		b, err := os.ReadFile(filepath.Join("testdata", p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("Pid:\t1\nNSpid:\t1 2 x\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseStatus(b)
		if err == nil && s.PID == 0 {
			t.Fatal("accepted a status without Pid")
		}
	})
}

func FuzzParseBracketed(f *testing.F) {
	f.Add("always [madvise] never")
	f.Add("[")
	f.Add("[0[]") // once kept "0[" as the value
	f.Fuzz(func(t *testing.T, s string) {
		v, err := parseBracketed(s)
		if err == nil && strings.ContainsAny(v, "[]") {
			t.Fatalf("value %q keeps a bracket", v)
		}
	})
}

func FuzzSysctlPath(f *testing.F) {
	f.Add("vm.swappiness")
	f.Add("net/ipv4/conf/eth0.1/rp_filter")
	f.Add("../x")
	f.Fuzz(func(t *testing.T, name string) {
		p, err := sysctlPath(name)
		if err == nil && (strings.HasPrefix(p, "/") || strings.Contains(p, "..")) {
			t.Fatalf("path %q escapes /proc/sys", p)
		}
	})
}

func FuzzParseInt(f *testing.F) {
	f.Add([]byte("-1000\n"))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = parseInt(b) })
}

func FuzzScanContains(f *testing.F) {
	f.Add([]byte("7f00-7f01 r-xp 0 08:01 1 /usr/lib/libtorch_cpu.so\n"), "libtorch")
	f.Fuzz(func(t *testing.T, b []byte, needle string) {
		got, err := scanContains(bufio.NewReader(strings.NewReader(string(b))), []byte(needle))
		if err == nil && needle != "" && !strings.Contains(string(b), needle) && got {
			t.Fatal("found a needle that is not there")
		}
	})
}

func FuzzSmapsLines(f *testing.F) {
	for _, p := range []string{"proc/517/smaps_rollup", "proc/4242/smaps"} {
		b, err := os.ReadFile(filepath.Join("testdata", p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var r SmapsRollup
		_ = r.addLines(b)
	})
}

func FuzzParseLimits(f *testing.F) {
	b, err := os.ReadFile("testdata/proc/517/limits")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(b))
	f.Add("Max processes             unlimited            unlimited            processes\n")
	f.Add(limitsHeader + "Max realtime timeout      unlimited            unlimited            us        \n")
	f.Fuzz(func(t *testing.T, s string) {
		l, err := parseLimits(strings.NewReader(s))
		if err != nil {
			return
		}
		for name := range l {
			if name == "" || strings.TrimSpace(name) != name {
				t.Fatalf("limit name %q", name)
			}
		}
	})
}
