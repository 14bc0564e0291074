package cgroup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func addFile(f *testing.F, path string) {
	b, err := os.ReadFile(filepath.Join("testdata", path))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(b))
}

func FuzzParseMountinfo(f *testing.F) {
	addFile(f, "mountinfo-hybrid-debian12.txt")
	f.Add(`1 0 0:1 /a\040b /mnt\134x rw - cgroup2 none rw`)
	f.Fuzz(func(t *testing.T, s string) { _, _ = ParseMountinfo(strings.NewReader(s)) })
}

func FuzzParseKeyValues(f *testing.F) {
	addFile(f, "v2/oomtest/memory.events")
	addFile(f, "v1/oomtest/memory.oom_control")
	f.Fuzz(func(t *testing.T, s string) { _, _ = parseKeyValues(s) })
}

func FuzzParseLimit(f *testing.F) {
	f.Add("max")
	f.Add("9223372036854771712")
	f.Fuzz(func(t *testing.T, s string) {
		l, err := parseLimit(s)
		if err == nil && !l.Unlimited && l.Bytes >= v1Unlimited {
			t.Fatalf("%q: huge value not unlimited", s)
		}
	})
}

func FuzzParseProcCgroup(f *testing.F) {
	f.Add("4:memory:/a\n0::/\n")
	f.Fuzz(func(t *testing.T, s string) { _, _ = parseProcCgroup(s) })
}
