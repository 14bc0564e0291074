package jobcgroup

import (
	"strings"
	"testing"
)

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
