package procfs

// /proc/<pid>/cgroup, read through prometheus/procfs. v1 lines name their
// controllers, the v2 line has hierarchy 0 and none:
//
//	4:memory:/process_api/8dfcf00b38dcf4c7
//	1:cpu:/
//	0::/user.slice/user-1000.slice/session-3.scope

import "fmt"

// CgroupLine is one line of /proc/<pid>/cgroup. Path is relative to the
// root of that hierarchy's mount.
type CgroupLine struct {
	HierarchyID int      `json:"hierarchy_id"`
	Controllers []string `json:"controllers,omitempty"`
	Path        string   `json:"path"`
}

// Cgroups reads <root>/<pid>/cgroup.
func (f FS) Cgroups(pid int) ([]CgroupLine, error) {
	p, err := f.prom.Proc(pid)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", f.pidPath(pid, ""), err)
	}
	cgs, err := p.Cgroups()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.pidPath(pid, "cgroup"), err)
	}
	out := make([]CgroupLine, len(cgs))
	for i, c := range cgs {
		out[i] = CgroupLine{HierarchyID: c.HierarchyID, Controllers: c.Controllers, Path: c.Path}
	}
	return out, nil
}

// MemoryCgroup picks the memory controller's path from lines: the v1
// "memory" line when there is one, else the v2 line (hierarchy 0). ok is
// false when neither is present.
func MemoryCgroup(lines []CgroupLine) (path string, v2 bool, ok bool) {
	for _, l := range lines {
		for _, c := range l.Controllers {
			if c == "memory" {
				return l.Path, false, true
			}
		}
	}
	for _, l := range lines {
		if l.HierarchyID == 0 && len(l.Controllers) == 0 {
			return l.Path, true, true
		}
	}
	return "", false, false
}
