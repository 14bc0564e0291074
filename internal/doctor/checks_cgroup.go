package doctor

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/torchmem/torchmem/internal/cgroup"
	"github.com/torchmem/torchmem/internal/units"
)

type hierResult struct {
	h   cgroup.Hierarchy
	err error
}

// hierarchy detects the cgroup mode from <ProcRoot>/self/mountinfo and
// moves the mount points under SysRoot, so fixture trees work.
func (h *Host) hierarchy() (cgroup.Hierarchy, error) {
	r := memo(h, "hier", func() hierResult {
		hi, err := cgroup.Detect(filepath.Join(h.ProcRoot, "self", "mountinfo"))
		if err != nil {
			return hierResult{err: err}
		}
		hi.Rebase(h.SysRoot)
		return hierResult{hi, nil}
	})
	return r.h, r.err
}

func checkCgroupVersion(h *Host) []Finding {
	hi, err := h.hierarchy()
	if err != nil {
		return []Finding{unreadable("cgroup.version", "cgroup", "/proc/self/mountinfo", err)}
	}
	f := newFinding("cgroup.version", "cgroup", OK, "cgroup_version.title", hi.Mode.String()).ev("/proc/self/mountinfo", describeHierarchy(hi))
	switch hi.Mode {
	case cgroup.ModeV2:
		return []Finding{f}
	case cgroup.ModeNone:
		f.Severity = Warn
		return []Finding{f.why("cgroup_version.none.why").fix("cgroup_version.none.fix")}
	}
	f.Severity = Info
	return []Finding{f.titled("cgroup_version.title_v1", hi.Mode.String()).why("cgroup_version.v1.why").fix("cgroup_version.v1.fix")}
}

func describeHierarchy(hi cgroup.Hierarchy) string {
	var parts []string
	if hi.MemoryV1 != nil {
		parts = append(parts, "memory v1 at /sys/"+afterSys(hi.MemoryV1.Point))
	}
	if hi.Unified != nil {
		parts = append(parts, "cgroup2 at /sys/"+afterSys(hi.Unified.Point))
	}
	if len(parts) == 0 {
		return "no cgroup mounts"
	}
	return strings.Join(parts, ", ")
}

// afterSys shows a mount point as the host path, whatever SysRoot is.
func afterSys(p string) string {
	if i := strings.Index(p, "fs/cgroup"); i >= 0 {
		return p[i:]
	}
	return p
}

func checkCgroupLimit(h *Host) []Finding {
	hi, err := h.hierarchy()
	if err != nil {
		return nil // reported by cgroup.version
	}
	s, src, err := h.procFile("self/cgroup")
	if err != nil {
		return []Finding{unreadable("cgroup.limit", "cgroup", src, err)}
	}
	self, err := cgroup.ParseProcessPath(s)
	if err != nil {
		return []Finding{unreadable("cgroup.limit", "cgroup", src, err)}
	}
	path := self.Path
	m, err := hi.ReadMemory(path)
	if err != nil {
		return []Finding{newFinding("cgroup.limit", "cgroup", Info, "cgroup_limit.title_unreadable", path).ev(src, path)}
	}
	memSrc := "/sys/" + afterSys(m.Dir)
	f := newFinding("cgroup.limit", "cgroup", OK, "cgroup_limit.title_none", path).ev(src, path)
	if m.Max.Unlimited {
		return []Finding{f.ev(memSrc, "max")}
	}
	f.Severity = Info
	f = f.titled("cgroup_limit.title", path, units.Bytes(int64(m.Max.Bytes)))
	if total := h.memTotal(); total > 0 {
		f = f.titled("cgroup_limit.title_of_ram", path, units.Bytes(int64(m.Max.Bytes)), units.Bytes(int64(total)))
	}
	f = f.ev(memSrc, fmt.Sprintf("limit %d, usage %d", m.Max.Bytes, m.UsageBytes))
	return []Finding{f.why("cgroup_limit.why")}
}

func checkSlices(h *Host) []Finding {
	hi, err := h.hierarchy()
	if err != nil {
		return nil
	}
	var out []Finding
	for _, slice := range []string{"/user.slice", "/system.slice"} {
		dir, _, err := hi.MemoryDir(slice)
		if err != nil || !dirExists(dir, "") {
			continue
		}
		m, err := hi.ReadMemory(slice)
		if err != nil {
			continue
		}
		id := "cgroup.slice." + strings.TrimSuffix(strings.TrimPrefix(slice, "/"), ".slice")
		f := newFinding(id, "cgroup", OK, "slice.title_none", slice).ev("/sys/"+afterSys(dir), m.Max.String())
		if !m.Max.Unlimited {
			f.Severity = Info
			f = f.titled("slice.title", slice, units.Bytes(int64(m.Max.Bytes))).
				why("slice.why").fix("slice.fix", strings.TrimPrefix(slice, "/"))
		}
		out = append(out, f)
	}
	return out
}

func checkAccounting(h *Host) []Finding {
	hi, err := h.hierarchy()
	if err != nil {
		return nil
	}
	f := newFinding("cgroup.accounting", "cgroup", OK, "accounting.title")
	switch {
	case hi.MemoryV1 != nil:
		s, src, err := h.procFile("cgroups")
		if err == nil && !memoryEnabledV1(s) {
			f.Severity = Warn
			return []Finding{f.titled("accounting.title_disabled").ev(src, "memory ... enabled 0").why("accounting.why").fix("accounting.fix")}
		}
		return []Finding{f.evMsg("/sys/"+afterSys(hi.MemoryV1.Point), "ev.memory_mounted")}
	case hi.Unified != nil:
		s, src, err := h.sysFile(afterSys(hi.Unified.Point) + "/cgroup.controllers")
		if err == nil && !slices.Contains(strings.Fields(s), "memory") {
			f.Severity = Warn
			return []Finding{f.titled("accounting.title_v2_absent").ev(src, s).why("accounting.why").fix("accounting.fix")}
		}
		return []Finding{f.ev(src, s)}
	}
	return nil
}

// memoryEnabledV1 reads /proc/cgroups ("memory 4 120 1").
func memoryEnabledV1(s string) bool {
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) == 4 && f[0] == "memory" {
			return f[3] == "1"
		}
	}
	return true
}

func checkDelegation(h *Host) []Finding {
	hi, err := h.hierarchy()
	if err != nil || hi.Mode == cgroup.ModeNone {
		return nil
	}
	id := "cgroup.delegation"
	if hi.MemoryV1 != nil {
		return []Finding{newFinding(id, "cgroup", Info, "delegation.title_v1").
			evMsg("/sys/"+afterSys(hi.MemoryV1.Point), "ev.owned_by_root").
			why("delegation.v1.why").fix("delegation.v1.fix")}
	}
	uid := h.UID
	if uid == 0 {
		uid = 1000 // root can create groups anywhere; check what an ordinary user gets
	}
	rel := fmt.Sprintf("%s/user.slice/user-%d.slice/user@%d.service/cgroup.subtree_control", afterSys(hi.Unified.Point), uid, uid)
	s, src, err := h.sysFile(rel)
	f := newFinding(id, "cgroup", OK, "delegation.title", uid).ev(src, s)
	if err == nil && slices.Contains(strings.Fields(s), "memory") {
		return []Finding{f}
	}
	f.Severity = Info
	f = f.titled("delegation.title_none", uid)
	if err != nil {
		f.Evidence[0].Value, f.Evidence[0].value = en("ev.no_user_manager"), msg{id: "ev.no_user_manager"}
	}
	return []Finding{f.why("delegation.why").fix("delegation.fix")}
}
