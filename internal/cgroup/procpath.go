package cgroup

// /proc/<pid>/cgroup: the v1 memory line, or the v2 line "0::/path".
//
//	4:memory:/user.slice/user-1000.slice/session-4.scope
//	0::/user.slice/user-1000.slice/session-3.scope

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Path is a process's memory cgroup: the path inside its hierarchy and
// whether that hierarchy is v2.
type Path struct {
	Path string `json:"path"`
	V2   bool   `json:"v2"`
}

// ProcessPath reads <procRoot>/<pid>/cgroup and returns the memory cgroup.
func ProcessPath(procRoot string, pid int) (Path, error) {
	file := filepath.Join(procRoot, strconv.Itoa(pid), "cgroup")
	b, err := os.ReadFile(file)
	if err != nil {
		return Path{}, fmt.Errorf("read %s: %w", file, err)
	}
	p, err := parseProcCgroup(string(b))
	if err != nil {
		return Path{}, fmt.Errorf("parse %s: %w", file, err)
	}
	return p, nil
}

// ParseProcessPath parses the text of a /proc/<pid>/cgroup file (for a
// caller that reads /proc/self/cgroup itself).
func ParseProcessPath(s string) (Path, error) { return parseProcCgroup(s) }

// parseProcCgroup prefers the v1 memory line (where memory is charged on a
// hybrid host) over the v2 line.
func parseProcCgroup(s string) (Path, error) {
	var v2 *Path
	for _, line := range strings.Split(s, "\n") {
		if line == "" {
			continue
		}
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			return Path{}, fmt.Errorf("line %q: want id:controllers:path", line)
		}
		if parts[0] == "0" && parts[1] == "" {
			v2 = &Path{Path: parts[2], V2: true}
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "memory" {
				return Path{Path: parts[2]}, nil
			}
		}
	}
	if v2 == nil {
		return Path{}, fmt.Errorf("no memory or v2 line")
	}
	return *v2, nil
}
