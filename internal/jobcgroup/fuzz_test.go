package jobcgroup

import (
	"strings"
	"testing"
)

func FuzzParseKV(f *testing.F) {
	f.Add("low 0\nhigh 3\nmax 7\noom 1\noom_kill 1\n")
	f.Add("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n")
	f.Fuzz(func(t *testing.T, s string) { _, _ = parseKV(strings.NewReader(s)) })
}

func FuzzParseMountinfo(f *testing.F) {
	f.Add("35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n")
	f.Add("30 24 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n")
	f.Fuzz(func(t *testing.T, s string) {
		h, err := parseMountinfo(strings.NewReader(s))
		if err == nil {
			_ = ownCgroup(s, h)
		}
	})
}
