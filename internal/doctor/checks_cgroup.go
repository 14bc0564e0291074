package doctor

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
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
	f := newFinding("cgroup.version", "cgroup", OK, "cgroup "+hi.Mode.String()).ev("/proc/self/mountinfo", describeHierarchy(hi))
	switch hi.Mode {
	case cgroup.ModeV2:
		return []Finding{f}
	case cgroup.ModeNone:
		f.Severity = Warn
		return []Finding{f.why("No cgroup file system is mounted: torchmem run cannot limit or account a job's memory.").
			fix("Mount cgroup2 on /sys/fs/cgroup (systemd does this at boot).")}
	}
	f.Severity = Info
	f.Title += " (memory controller on v1)"
	return []Finding{f.
		why("On v1 the kernel counts a job's memory, but memory.events (oom_kill counts per group), memory.high throttling, and per-group PSI exist only on v2; torchmem run falls back to memory.oom_control and failcnt.").
		fix("RHEL/CentOS 8: grubby --update-kernel=ALL --args=systemd.unified_cgroup_hierarchy=1 and reboot (RHEL 9 and current distributions default to v2).")}
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
		return []Finding{newFinding("cgroup.limit", "cgroup", Info, "memory cgroup "+path+" could not be read").ev(src, path)}
	}
	memSrc := "/sys/" + afterSys(m.Dir)
	f := newFinding("cgroup.limit", "cgroup", OK, "this shell's memory cgroup "+path+" has no limit").ev(src, path)
	if m.Max.Unlimited {
		return []Finding{f.ev(memSrc, "max")}
	}
	f.Severity = Info
	f.Title = fmt.Sprintf("this shell's memory cgroup %s is limited to %s", path, units.Bytes(int64(m.Max.Bytes)))
	if total := h.memTotal(); total > 0 {
		f.Title += fmt.Sprintf(" of %s RAM", units.Bytes(int64(total)))
	}
	f = f.ev(memSrc, fmt.Sprintf("limit %d, usage %d", m.Max.Bytes, m.UsageBytes))
	return []Finding{f.why("Jobs started from here inherit this limit (a Slurm step, a container, a systemd scope): they are OOM-killed at it, whatever the host has free. torchmem run reports both this outer limit and its own.")}
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
		f := newFinding(id, "cgroup", OK, slice+" has no memory limit").ev("/sys/"+afterSys(dir), m.Max.String())
		if !m.Max.Unlimited {
			f.Severity = Info
			f.Title = fmt.Sprintf("%s is limited to %s", slice, units.Bytes(int64(m.Max.Bytes)))
			f = f.why("Every job started in this slice (logins, services) shares this limit.").
				fix("systemctl set-property " + strings.TrimPrefix(slice, "/") + " MemoryMax=infinity, or size jobs to fit.")
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
	f := newFinding("cgroup.accounting", "cgroup", OK, "memory accounting is enabled")
	switch {
	case hi.MemoryV1 != nil:
		s, src, err := h.procFile("cgroups")
		if err == nil && !memoryEnabledV1(s) {
			f.Severity, f.Title = Warn, "memory cgroup controller is disabled"
			return []Finding{f.ev(src, "memory ... enabled 0").why(noMemcgWhy).fix("Add cgroup_enable=memory to the kernel command line and reboot.")}
		}
		return []Finding{f.ev("/sys/"+afterSys(hi.MemoryV1.Point), "memory controller mounted")}
	case hi.Unified != nil:
		s, src, err := h.sysFile(afterSys(hi.Unified.Point) + "/cgroup.controllers")
		if err == nil && !slices.Contains(strings.Fields(s), "memory") {
			f.Severity, f.Title = Warn, "the memory controller is not available on cgroup v2"
			return []Finding{f.ev(src, s).why(noMemcgWhy).fix("Add cgroup_enable=memory to the kernel command line and reboot.")}
		}
		return []Finding{f.ev(src, s)}
	}
	return nil
}

const noMemcgWhy = "Without the memory controller nothing can limit or account a job's memory: no cgroup OOM kills (the whole host OOMs instead), no per-job usage for torchmem run."

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
		return []Finding{newFinding(id, "cgroup", Info, "non-root users cannot create memory cgroups (v1)").
			ev("/sys/"+afterSys(hi.MemoryV1.Point), "owned by root").
			why("On v1 only root can create memory cgroups: torchmem run needs root (or sudo) to give a job its own limit and OOM accounting; without it, it runs the job unconfined and says so.").
			fix("Use cgroup v2, where systemd delegates a user's subtree, or run torchmem run as root.")}
	}
	uid := h.UID
	if uid == 0 {
		uid = 1000 // root can create groups anywhere; check what an ordinary user gets
	}
	rel := fmt.Sprintf("%s/user.slice/user-%d.slice/user@%d.service/cgroup.subtree_control", afterSys(hi.Unified.Point), uid, uid)
	s, src, err := h.sysFile(rel)
	f := newFinding(id, "cgroup", OK, "user "+strconv.Itoa(uid)+" has a delegated cgroup subtree with the memory controller").ev(src, s)
	if err == nil && slices.Contains(strings.Fields(s), "memory") {
		return []Finding{f}
	}
	f.Severity = Info
	f.Title = "user " + strconv.Itoa(uid) + " has no delegated memory controller"
	if err != nil {
		f.Evidence[0].Value = "not present (user not logged in, or no systemd user manager)"
	}
	return []Finding{f.why("Without delegation a non-root torchmem run cannot create a job cgroup with a memory limit.").
		fix("systemd: a drop-in for user@.service with Delegate=memory pids cpu (mkdir -p /etc/systemd/system/user@.service.d; printf '[Service]\\nDelegate=memory pids cpu\\n' > …/delegate.conf; systemctl daemon-reload), or systemd-run --user --scope -p MemoryMax=…")}
}
