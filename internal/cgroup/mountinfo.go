package cgroup

// /proc/self/mountinfo, the cgroup lines (hybrid host, Debian 12):
//
//	35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
//	41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
//
// Field 4 is the root of the mount inside the hierarchy (not "/" inside a
// container without a cgroup namespace), field 5 the mount point.

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Mode is how the host mounts cgroups.
type Mode int

// The cgroup modes Detect tells apart.
const (
	ModeNone   Mode = iota // no cgroup file system mounted
	ModeV1                 // legacy: every controller on its own v1 hierarchy
	ModeHybrid             // v1 controllers plus a cgroup2 mount (systemd "hybrid")
	ModeV2                 // unified: one cgroup2 hierarchy
)

// String returns "none", "v1", "hybrid" or "v2".
func (m Mode) String() string {
	return [...]string{"none", "v1", "hybrid", "v2"}[m]
}

// MarshalText makes Mode print as its name in JSON.
func (m Mode) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// Mount is one cgroup mount: Point is where it is mounted, Root the path
// inside the hierarchy that appears there.
type Mount struct {
	Point string `json:"point"`
	Root  string `json:"root"`
}

// Hierarchy is the cgroup layout of a host. MemoryV1 is the v1 memory
// controller's mount, Unified the cgroup2 mount; either may be nil.
// FreezerV1 is the v1 freezer's mount, nil when absent (not in JSON: only
// the job cgroup creator uses it).
type Hierarchy struct {
	Mode      Mode   `json:"mode"`
	MemoryV1  *Mount `json:"memory_v1,omitempty"`
	Unified   *Mount `json:"unified,omitempty"`
	FreezerV1 *Mount `json:"-"`
}

// Detect reads a mountinfo file (normally /proc/self/mountinfo).
func Detect(mountinfoPath string) (Hierarchy, error) {
	f, err := os.Open(mountinfoPath)
	if err != nil {
		return Hierarchy{}, fmt.Errorf("read %s: %w", mountinfoPath, err)
	}
	defer f.Close()
	h, err := ParseMountinfo(f)
	if err != nil {
		return Hierarchy{}, fmt.Errorf("parse %s: %w", mountinfoPath, err)
	}
	return h, nil
}

// Rebase moves the memory and cgroup2 mount points under /sys onto sysRoot:
// mountinfo names the real mount points, a fixture tree under an injected
// SysRoot does not.
func (h *Hierarchy) Rebase(sysRoot string) {
	for _, m := range []*Mount{h.MemoryV1, h.Unified} {
		if m != nil && strings.HasPrefix(m.Point, "/sys/") {
			m.Point = filepath.Join(sysRoot, strings.TrimPrefix(m.Point, "/sys/"))
		}
	}
}

// ParseMountinfo finds the cgroup mounts in mountinfo text and decides the
// mode: any v1 controller hierarchy makes it v1, or hybrid when a cgroup2
// mount exists too; only cgroup2 is v2.
func ParseMountinfo(r io.Reader) (Hierarchy, error) {
	var h Hierarchy
	v1Controllers := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		sep := slices.Index(fields, "-")
		if sep < 5 || sep+3 > len(fields) {
			continue // not a well-formed line; mountinfo has no comments
		}
		fstype, superOpts := fields[sep+1], ""
		if sep+3 < len(fields) {
			superOpts = fields[sep+3]
		}
		m := &Mount{Point: unescape(fields[4]), Root: unescape(fields[3])}
		switch fstype {
		case "cgroup2":
			if h.Unified == nil {
				h.Unified = m
			}
		case "cgroup":
			for _, o := range strings.Split(superOpts, ",") {
				if o == "memory" && h.MemoryV1 == nil {
					h.MemoryV1 = m
				}
				if o == "freezer" && h.FreezerV1 == nil {
					h.FreezerV1 = m
				}
				if v1ControllerNames[o] {
					v1Controllers = true
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return Hierarchy{}, err
	}
	switch {
	case v1Controllers && h.Unified != nil:
		h.Mode = ModeHybrid
	case v1Controllers:
		h.Mode = ModeV1
	case h.Unified != nil:
		h.Mode = ModeV2
	}
	return h, nil
}

// v1ControllerNames are the v1 controllers; a "name=systemd" hierarchy
// alone (no controller) does not make a host v1.
var v1ControllerNames = map[string]bool{
	"cpu": true, "cpuacct": true, "cpuset": true, "memory": true, "devices": true,
	"freezer": true, "net_cls": true, "net_prio": true, "blkio": true, "perf_event": true,
	"hugetlb": true, "pids": true, "rdma": true, "misc": true,
}

// unescape undoes mountinfo's octal escapes (\040 for space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) && isOctal(s[i+1:i+4]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(s string) bool {
	if len(s) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		if s[i] < '0' || s[i] > '7' {
			return false
		}
	}
	return s[0] <= '3'
}
