package oomexplain

import "testing"

// Sources of the excerpts in testdata/kernel (copied verbatim):
//   cgroup-v{1,2}-6.18.dmesg       captured for this project (100 MB memcg, 300 MB python)
//   local-v1-6.18.*                the same test run here, printed by dmesg, -T, --time-format iso, -x, -r and /dev/kmsg
//   centos7-3.10-gregg.dmesg       Brendan Gregg, "Linux Performance Analysis in 60,000 Milliseconds" (3.x kernel)
//   rhel8-4.18-memcg-memsw.dmesg   a public blog repository's RHEL 8 (4.18) Kubernetes pod OOM
//   k8s-4.x-two-stats.dmesg        a Kubernetes OOM exporter's test (4.x, one stats line per cgroup)
//   k8s-4.x-memcg-child.dmesg      LKML report (Tetsuo Handa, 2018-11-14), child victim of a memcg kill
//   lkml-5.8-global-quoted-wrapped LKML "BUG: Bad page state" thread (2020-07), quoted and wrapped at 80 columns
//   syzkaller-5.10-caller-wrapped  LKML io_uring report (2023-05), printk caller ids, wrapped
//   ubuntu-5.0-glued.dmesg         Ubuntu forums post (2019-05), two records glued on one line
//   syslog-4.x-global.log          genular/pandora issue #49, journalctl short format
//   syslog-kernel-stamp.log        a blog's grep of /var/log/syslog (kernel timestamp inside)
//   dmesg-T-en-3.x.txt             a blog's dmesg -T output
//   dmesg-T-zh-4.x.txt             a Chinese blog's dmesg -T output (zh_CN locale: "四 3月")

// dmesg-T-zh-4.x.txt has three "Task in" lines: three events, one incident each.
func TestKernelOOM(t *testing.T) {
	tests := []struct {
		file        string
		n           int
		victim      int
		comm        string
		constraint  string
		oomMemcg    string
		limit       int64
		anonRSS     int64
		tasks       int
		verdict     Verdict
		truncated   bool
		hasWallTime bool
	}{
		{"kernel/cgroup-v1-6.18.dmesg", 1, 19335, "python3", "CONSTRAINT_MEMCG", "/trainjob", 100 * mib, 102016 * kib, 1, VerdictCgroupLimit, false, false},
		{"kernel/cgroup-v2-6.18.dmesg", 1, 506, "python3", "CONSTRAINT_MEMCG", "/tmcap", 100 * mib, 102016 * kib, 1, VerdictCgroupLimit, false, false},
		{"kernel/local-v1-6.18.dmesg", 1, 10051, "python3", "CONSTRAINT_MEMCG", "/tmoom-capture-10205", 100 * mib, 102016 * kib, 1, VerdictCgroupLimit, false, false},
		{"kernel/local-v1-6.18.dmesg-T", 1, 10051, "python3", "CONSTRAINT_MEMCG", "/tmoom-capture-10205", 100 * mib, 102016 * kib, 1, VerdictCgroupLimit, false, true},
		{"kernel/local-v1-6.18.dmesg-iso", 1, 10051, "python3", "CONSTRAINT_MEMCG", "/tmoom-capture-10205", 100 * mib, 102016 * kib, 1, VerdictCgroupLimit, false, true},
		{"kernel/local-v1-6.18.dmesg-x", 1, 10051, "python3", "CONSTRAINT_MEMCG", "/tmoom-capture-10205", 100 * mib, 102016 * kib, 1, VerdictCgroupLimit, false, false},
		{"kernel/local-v1-6.18.dmesg-r", 1, 10051, "python3", "CONSTRAINT_MEMCG", "/tmoom-capture-10205", 100 * mib, 102016 * kib, 1, VerdictCgroupLimit, false, false},
		{"kernel/local-v1-6.18.kmsg", 1, 10051, "python3", "CONSTRAINT_MEMCG", "/tmoom-capture-10205", 100 * mib, 102016 * kib, 1, VerdictCgroupLimit, false, false},
		{"kernel/centos7-3.10-gregg.dmesg", 1, 18694, "perl", "", "", 0, 1953348 * kib, 0, VerdictHostExhausted, false, false},
		{"kernel/rhel8-4.18-memcg-memsw.dmesg", 1, 7093, "java", "CONSTRAINT_MEMCG", "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podd63c4bbe_5f18_11ec_bdcd_d094668d7dd6.slice/docker-083afd1a06b8b612ab5d974e12200d7fd1d35be6a44f0e368179399ef6c6e84d.scope", 33554432 * kib, 1968776 * kib, 0, VerdictCgroupLimit, false, false},
		{"kernel/k8s-4.x-memcg-child.dmesg", 1, 1083, "a.out", "CONSTRAINT_MEMCG", "/test1", 0, 96 * kib, 0, VerdictCgroupLimit, true, false},
		{"kernel/lkml-5.8-global-quoted-wrapped.txt", 1, 3261, "oom01", "CONSTRAINT_NONE", "", 0, 13397556 * kib, 40, VerdictHostExhausted, true, false},
		{"kernel/ubuntu-5.0-glued.dmesg", 1, 4294, "node", "CONSTRAINT_NONE", "", 0, 72856 * kib, 0, VerdictHostExhausted, true, false},
		{"kernel/syslog-4.x-global.log", 1, 27438, "R", "", "", 0, 1041924 * kib, 0, VerdictHostExhausted, true, true},
		// A lone "Killed process" line: kernels before 5.x print it after a
		// global and a memcg OOM alike, so which limit ran out is not in it.
		{"kernel/syslog-kernel-stamp.log", 1, 17909, "procon", "", "", 0, 4543100 * kib, 0, VerdictIncomplete, true, true},
		{"kernel/dmesg-T-en-3.x.txt", 1, 83446, "machine", "", "", 0, 1177488 * kib, 0, VerdictHostExhausted, true, true},
		{"kernel/dmesg-T-zh-4.x.txt", 3, 0, "", "CONSTRAINT_MEMCG", "/kubepods/pod3759885e-2d2e-45f6-a100-a1230831cbac", 0, 0, 0, VerdictCgroupLimit, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			incs := parseFile(t, tc.file)
			if len(incs) != tc.n {
				t.Fatalf("got %d incidents, want %d", len(incs), tc.n)
			}
			inc := incs[0]
			ko := inc.Kernel
			if inc.Kind != KindKernelOOM || ko == nil {
				t.Fatalf("kind %s", inc.Kind)
			}
			if tc.victim != 0 {
				if ko.Victim == nil || ko.Victim.PID != tc.victim || ko.Victim.Comm != tc.comm {
					t.Errorf("victim %+v, want %d (%s)", ko.Victim, tc.victim, tc.comm)
				} else if !ptrEq(ko.Victim.AnonRSSBytes, tc.anonRSS) {
					t.Errorf("anon-rss %v, want %d", ko.Victim.AnonRSSBytes, tc.anonRSS)
				}
			}
			if ko.Constraint != tc.constraint || ko.OOMMemcg != tc.oomMemcg {
				t.Errorf("constraint %q memcg %q, want %q %q", ko.Constraint, ko.OOMMemcg, tc.constraint, tc.oomMemcg)
			}
			if tc.limit != 0 && (ko.Memcg == nil || ko.Memcg.LimitBytes != tc.limit) {
				t.Errorf("memcg %+v, want limit %d", ko.Memcg, tc.limit)
			}
			if ko.TasksTotal != tc.tasks {
				t.Errorf("tasks %d, want %d", ko.TasksTotal, tc.tasks)
			}
			if inc.Explanation.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s (%s)", inc.Explanation.Verdict, tc.verdict, inc.Explanation.Summary)
			}
			if inc.Truncated != tc.truncated {
				t.Errorf("truncated %v, want %v", inc.Truncated, tc.truncated)
			}
			if (inc.Time != nil) != tc.hasWallTime {
				t.Errorf("time %v, want present=%v", inc.Time, tc.hasWallTime)
			}
		})
	}
}

func TestKernelOOMDetails(t *testing.T) {
	inc := parseFile(t, "kernel/cgroup-v1-6.18.dmesg")[0]
	ko := inc.Kernel
	if tr := ko.Trigger; tr == nil || tr.Comm != "python3" || !ptrEq(tr.PID, 19335) || tr.GFPMask != "0xcc0(GFP_KERNEL)" || !ptrEq(tr.Order, 0) {
		t.Errorf("trigger %+v", ko.Trigger)
	}
	if !ptrEq(inc.UptimeSeconds, 816.907974) {
		t.Errorf("uptime %v", inc.UptimeSeconds)
	}
	if ko.Memsw == nil || !ko.Memsw.Unlimited || ko.Memcg.Failcnt != 1473 {
		t.Errorf("memsw %+v memcg %+v", ko.Memsw, ko.Memcg)
	}
	if ko.MemcgStats["rss"] != 104534016 || ko.MemcgStatsPath != "/trainjob" {
		t.Errorf("stats %v at %q", ko.MemcgStats, ko.MemcgStatsPath)
	}
	row := ko.Tasks[0]
	if row.PID != 19335 || row.RSSBytes != 26152*4096 || !ptrEq(row.RSSAnonBytes, 25504*4096) || row.Name != "python3" {
		t.Errorf("task row %+v", row)
	}

	// 4.18: memory+swap, not memory, was at its limit; the reaper line follows.
	rh := parseFile(t, "kernel/rhel8-4.18-memcg-memsw.dmesg")[0]
	if rh.Kernel.Reaped == nil || rh.Kernel.Reaped.PID != 7093 || !ptrEq(rh.Kernel.Reaped.AnonRSSBytes, 0) {
		t.Errorf("reaped %+v", rh.Kernel.Reaped)
	}
	if rh.Kernel.Cpuset == "" || rh.Kernel.MemsAllowed != "0-3" || !ptrEq(rh.Kernel.Trigger.OOMScoreAdj, 916) {
		t.Errorf("cpuset %q mems %q trigger %+v", rh.Kernel.Cpuset, rh.Kernel.MemsAllowed, rh.Kernel.Trigger)
	}
	if s := rh.Explanation.Summary; !contains(s, "memory+swap") {
		t.Errorf("summary %q should name the memory+swap limit", s)
	}

	// 4.x prints local stats for each cgroup of the subtree: they add up.
	two := parseFile(t, "kernel/k8s-4.x-two-stats.dmesg")[0]
	if two.Kernel.MemcgStats["rss"] != 36*kib || two.Kernel.Selected.PID != 8308 || two.Explanation.Verdict != VerdictCgroupLimit ||
		two.Kernel.OOMMemcg != "/kubepods/burstable/podaf389229-5fc5-4617-ae95-9160d576eb49" {
		t.Errorf("two stats lines: %+v %s", two.Kernel, two.Explanation.Verdict)
	}
	if !contains(two.Explanation.Recommendations[0], "Kubernetes") {
		t.Errorf("limit owner: %s", two.Explanation.Recommendations[0])
	}

	// 3.10: the selection line with its score precedes the kill.
	g := parseFile(t, "kernel/centos7-3.10-gregg.dmesg")[0]
	if g.Kernel.Selected == nil || !ptrEq(g.Kernel.Selected.Score, 246) || g.Kernel.Trigger.GFPMask != "0x280da" {
		t.Errorf("selected %+v trigger %+v", g.Kernel.Selected, g.Kernel.Trigger)
	}

	// 4.x: the kernel chose 1079 and killed its child 1083.
	c := parseFile(t, "kernel/k8s-4.x-memcg-child.dmesg")[0]
	if c.Kernel.Selected.PID != 1079 || c.Kernel.Victim.PID != 1083 || c.Kernel.MemcgStats["rss"] != 95832*kib {
		t.Errorf("selected %+v victim %+v stats %v", c.Kernel.Selected, c.Kernel.Victim, c.Kernel.MemcgStats)
	}
}

func TestKernelWrappedPaste(t *testing.T) {
	inc := parseFile(t, "kernel/lkml-5.8-global-quoted-wrapped.txt")[0]
	ko := inc.Kernel
	v := ko.Victim
	if !ptrEq(v.TotalVMBytes, 18905540*kib) || !ptrEq(v.PgTablesBytes, 26308*kib) || !ptrEq(v.UID, 0) {
		t.Errorf("victim not rejoined: %+v", v)
	}
	if ko.Tasks[0].PID != 3261 || ko.Tasks[0].RSSBytes != 3349389*4096 {
		t.Errorf("biggest task %+v", ko.Tasks[0])
	}
	var udev *Task
	for i := range ko.Tasks {
		if ko.Tasks[i].PID == 349 {
			udev = &ko.Tasks[i]
		}
	}
	if udev == nil || udev.OOMScoreAdj != -1000 || udev.Name != "systemd-udevd" {
		t.Errorf("wrapped row 349: %+v", udev)
	}
	if ko.Reaped == nil || ko.Reaped.PID != 3261 || !ptrEq(ko.Reaped.ShmemRSSBytes, 0) {
		t.Errorf("reaper %+v", ko.Reaped)
	}
	if ko.MemInfo == nil || !ptrEq(ko.MemInfo.TotalRAMBytes, 4181245*4096) || !ptrEq(ko.MemInfo.SwapTotalBytes, 0) {
		t.Errorf("mem info %+v", ko.MemInfo)
	}

	syz := parseFile(t, "kernel/syzkaller-5.10-caller-wrapped.txt")
	if len(syz) != 2 || !ptrEq(syz[0].Kernel.Victim.AnonRSSBytes, 1112*kib) || syz[0].Kernel.MemsAllowed != "0-1" {
		t.Fatalf("syzkaller: %d incidents, first %+v", len(syz), syz[0].Kernel)
	}
	if tr := syz[1].Kernel.Trigger; tr == nil || tr.Comm != "syz-executor.0" || !ptrEq(tr.OOMScoreAdj, 1000) || !ptrEq(tr.PID, 9068) {
		t.Errorf("wrapped trigger %+v", tr)
	}
	if syz[1].Explanation.Verdict != VerdictIncomplete {
		t.Errorf("trigger-only report: %s", syz[1].Explanation.Verdict)
	}

	glued := parseFile(t, "kernel/ubuntu-5.0-glued.dmesg")[0]
	if glued.Kernel.TaskMemcg != "/system.slice/cron.service" || glued.Kernel.Selected == nil || glued.Kernel.Reaped == nil {
		t.Errorf("glued lines: %+v", glued.Kernel)
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || len(s) >= len(sub) && (s[:len(sub)] == sub || contains(s[1:], sub))
}
