package oomexplain

import (
	"strings"
	"testing"
)

// Real excerpts, copied from public sources:
//
//	aliyunNodeOOM, aliyunHostOOM: Alibaba Cloud Linux documentation, "Causes
//	  of and solutions to the issue of OOM Killer being triggered"
//	  (help.aliyun.com/zh/alinux/support/causes-of-and-solutions-to-the-issue-of-oom-killer-being-triggered), 4.19 vendor kernel
//	suiZones: MystenLabs/sui issue #18768 (5.15, journalctl), zone lines
//	harmonyTwoKills: harmony-one/harmony issue #3709 (`dmesg | grep harmony`,
//	  5.4): task rows without their header, two kills, the last line cut
const aliyunNodeOOM = `[Sat Sep 11 09:46:24 2021] main invoked oom-killer: gfp_mask=0x62****(GFP_HIGHUSER_MOVABLE|__GFP_ZERO), nodemask=(null), order=0, oom_score_adj=0
[Sat Sep 11 09:46:24 2021] main cpuset=mm_cpuset mems_allowed=1
[Sat Sep 11 09:46:24 2021] Task in / killed as a result of limit of host
[Sat Sep 11 09:46:24 2021] Mem-Info:
[Sat Sep 11 09:46:24 2021] active_anon:172 inactive_anon:4518735 isolated_anon:
    free:4111496 free_pcp:1 free_cma:0
[Sat Sep 11 09:46:24 2021] Node 1 Normal free:43636kB min:45148kB low:441424kB high:837700kB
[Sat Sep 11 09:46:24 2021] Node 1 Normal: 856*4kB (UME) 375*8kB (UME) 183*16kB (UME) 184*32kB (UME) 87*64kB (ME) 45*128kB (UME) 16*256kB (UME) 5*512kB (UE) 14*1024kB (UME) 0     *2048kB 0*4096kB = 47560kB
[Sat Sep 11 09:46:24 2021] Node 0 hugepages_total=360 hugepages_free=360 hugepages_surp=0 hugepages_size=1048576kB
[Sat Sep 11 09:46:24 2021] Node 0 hugepages_total=0 hugepages_free=0 hugepages_surp=0 hugepages_size=2048kB
[Sat Sep 11 09:46:24 2021] Node 1 hugepages_total=360 hugepages_free=360 hugepages_surp=0 hugepages_size=1048576kB
[Sat Sep 11 09:46:25 2021] Node 1 hugepages_total=0 hugepages_free=0 hugepages_surp=0 hugepages_size=2048kB
`

const aliyunHostOOM = `[Sat Sep 11 15:22:46 2021] insmod invoked oom-killer: gfp_mask=0x60****(GFP_KERNEL), nodemask=(null), order=3, oom_score_adj=0
[Sat Sep 11 15:22:46 2021] insmod cpuset=/ mems_allowed=0
[Sat Sep 11 15:22:46 2021] Task in /user.slice killed as a result of limit of host
[Sat Sep 11 15:22:46 2021] Node 0 Normal free:23500kB min:15892kB low:19864kB high:23836kB active_anon:308kB inactive_anon:194492kB active_file:384kB inactive_file:420kB unevi    ctable:0kB writepending:464kB present:917504kB managed:852784kB mlocked:0kB kernel_stack:2928kB pagetables:9188kB bounce:0kB
[Sat Sep 11 15:22:46 2021] Node 0 Normal: 1325*4kB (UME) 966*8kB (UME) 675*16kB (UME) 0*32kB (M) 0*64kB 0*128kB 0*256kB 0*512kB 0*1024kB 0*2048kB 0*4096kB =
`

const suiZones = `Jul 23 07:37:14 sui-mainnet kernel: [ 2764.683501] sui-node-runtim invoked oom-killer: gfp_mask=0x1100cca(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj=0
Jul 23 07:37:14 sui-mainnet kernel: [ 2764.683505] CPU: 9 PID: 11149 Comm: sui-node-runtim Not tainted 5.15.0-116-generic #126-Ubuntu
Jul 23 07:37:14 sui-mainnet kernel: [ 2764.683565] Node 0 DMA32 free:249524kB min:2384kB low:4696kB high:7008kB reserved_highatomic:0KB active_anon:0kB inactive_anon:2163504kB active_file:0kB inactive_file:48kB unevictable:0kB writepending:0kB present:2490048kB managed:2423956kB mlocked:0kB bounce:0kB free_pcp:0kB local_pcp:0kB free_cma:0kB
Jul 23 07:37:14 sui-mainnet kernel: [ 2764.683567] lowmem_reserve[]: 0 0 61795 61795 61795
Jul 23 07:37:14 sui-mainnet kernel: [ 2764.683569] Node 0 Normal free:65140kB min:65180kB low:128456kB high:191732kB reserved_highatomic:0KB active_anon:1304kB inactive_anon:62771820kB active_file:1360kB inactive_file:1408kB unevictable:27744kB writepending:0kB present:64487424kB managed:63287848kB mlocked:27744kB bounce:0kB free_pcp:0kB local_pcp:0kB free_cma:0kB
Jul 23 07:37:14 sui-mainnet kernel: [ 2764.683571] lowmem_reserve[]: 0 0 0 0 0
Jul 23 07:37:14 sui-mainnet kernel: [ 2764.683573] Node 0 DMA: 0*4kB 0*8kB 0*16kB 0*32kB 0*64kB 0*128kB 0*256kB 0*512kB 1*1024kB (U) 1*2048kB (M) 2*4096kB (M) = 11264kB
`

const harmonyTwoKills = `[1550230.874887] harmony invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj=0
[1550230.874892] CPU: 1 PID: 42963 Comm: harmony Not tainted 5.4.0-1041-aws #43-Ubuntu
[1550230.874997] [  32209]  1000 32209  1395312   909707  7720960        0             0 harmony
[1550230.874998] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/system.slice/harmony.service,task=harmony,pid=32209,uid=1000
[1550230.875042] Out of memory: Killed process 32209 (harmony) total-vm:5581248kB, anon-rss:3638828kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:7540kB oom_score_adj:0
[1550231.167912] oom_reaper: reaped process 32209 (harmony), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB
[2090066.261310] [  68640]  1000 68640  1400288   908756  7692288        0             0 harmony
[2090066.261313] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/system.slice/harmony.service,task=harmony,pid=68640,uid=1000
[2090066.261360] Out of memory: Killed process 68640 (harmony) total-vm:5601152kB, anon-rss:3635024kB, file-rss:0
`

func TestLimitOfHostIsNoCgroup(t *testing.T) {
	for _, s := range []string{aliyunNodeOOM, aliyunHostOOM} {
		incs := parseString(t, s)
		if len(incs) != 1 {
			t.Fatalf("%d incidents", len(incs))
		}
		ko := incs[0].Kernel
		if !ko.LimitOfHost || ko.OOMMemcg != "" || ko.Constraint == "CONSTRAINT_MEMCG" {
			t.Errorf("limit of host: %+v", ko)
		}
	}
	ko := parseString(t, aliyunHostOOM)[0].Kernel
	if ko.TaskMemcg != "/user.slice" {
		t.Errorf("task memcg %q", ko.TaskMemcg)
	}
}

func TestNodeWatermarks(t *testing.T) {
	ko := parseString(t, aliyunNodeOOM)[0].Kernel
	if len(ko.Nodes) != 1 || ko.Nodes[0].Node != 1 || len(ko.Nodes[0].Zones) != 1 {
		t.Fatalf("nodes %+v", ko.Nodes)
	}
	z := ko.Nodes[0].Zones[0]
	if z.Zone != "Normal" || !ptrEq(z.FreeBytes, 43636*kib) || !ptrEq(z.MinBytes, 45148*kib) || !ptrEq(z.HighBytes, 837700*kib) || !z.BelowMin() || z.PresentBytes != nil {
		t.Errorf("zone %+v", z)
	}
	// The whole host still had 4111496 free pages: only node 1 was short.
	if ko.MemInfo == nil || !ptrEq(ko.MemInfo.FreeBytes, 4111496*4096) {
		t.Errorf("mem info %+v", ko.MemInfo)
	}
	// Two page sizes per node: 2 * 360 1 GiB pages, not overwritten by the 2 MiB line.
	if !ptrEq(ko.MemInfo.HugePagesBytes, 720*gib) {
		t.Errorf("huge pages %v", deref(ko.MemInfo.HugePagesBytes))
	}

	host := parseString(t, aliyunHostOOM)[0].Kernel.Nodes[0]
	if !ptrEq(host.PresentBytes, 917504*kib) || !ptrEq(host.ManagedBytes, 852784*kib) || host.Zones[0].BelowMin() {
		t.Errorf("node 0 %+v", host)
	}

	sui := parseString(t, suiZones)[0].Kernel
	if len(sui.Nodes) != 1 || len(sui.Nodes[0].Zones) != 2 || !sui.Nodes[0].Zones[1].BelowMin() || sui.Nodes[0].Zones[0].BelowMin() {
		t.Fatalf("sui nodes %+v", sui.Nodes)
	}
	if !ptrEq(sui.Nodes[0].FreeBytes, (249524+65140)*kib) || !ptrEq(sui.Nodes[0].MinBytes, (2384+65180)*kib) {
		t.Errorf("node sums %+v", sui.Nodes[0])
	}
}

func TestTraceMemcg(t *testing.T) {
	tests := []struct {
		name, trace string
		memcg       bool
	}{
		// 6.18, captured for this project (testdata/kernel/cgroup-v2-6.18.dmesg).
		{"6.x", " mem_cgroup_out_of_memory+0xe4/0x100\n try_charge_memcg+0x1c7/0x7f0", true},
		// 3.10 memcg (CentOS 7): the charge frames with addresses.
		{"3.10", " [<ffffffff811c5f3e>] mem_cgroup_oom_synchronize+0x55e/0x5a0", true},
		// '?' frames are stale stack contents, not evidence.
		{"stale", " [<ffffffff8af0101b>] ? mem_cgroup_charge_common+0x6b/0x120", false},
		// Global OOM (Mina issue #10456, 4.15): no charge frame.
		{"global", " out_of_memory+0x116/0x4e0\n __alloc_pages_slowpath+0xa53/0xe00\n filemap_fault+0x42f/0x750", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := "python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0\nCall Trace:\n" + tc.trace +
				"\nKilled process 10 (python3) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB\n"
			ko := parseString(t, s)[0].Kernel
			if ko.TraceMemcg != tc.memcg || (ko.Constraint == "CONSTRAINT_MEMCG") != tc.memcg ||
				tc.memcg && !strings.HasPrefix(ko.ConstraintInferred, "call trace: ") {
				t.Errorf("trace memcg %v constraint %q (%s)", ko.TraceMemcg, ko.Constraint, ko.ConstraintInferred)
			}
		})
	}
}

func TestSacrificeChildKeepsBoth(t *testing.T) {
	// LKML (Tetsuo Handa, 2018-11-14), testdata/kernel/k8s-4.x-memcg-child.dmesg.
	s := "[   43.976150] Memory cgroup out of memory: Kill process 1079 (a.out) score 990 or sacrifice child\n" +
		"[   43.980391] Killed process 1083 (a.out) total-vm:209156kB, anon-rss:96kB, file-rss:0kB, shmem-rss:0kB\n"
	incs := parseString(t, s)
	ko := incs[0].Kernel
	if len(incs) != 1 || ko.Selected == nil || ko.Selected.PID != 1079 || !ptrEq(ko.Selected.Score, 990) ||
		ko.Victim == nil || ko.Victim.PID != 1083 || !equalInts(incs[0].PIDs, []int{1083}) {
		t.Errorf("%d incidents, selected %+v victim %+v pids %v", len(incs), ko.Selected, ko.Victim, incs[0].PIDs)
	}
	if ko.Constraint != "CONSTRAINT_MEMCG" || ko.ConstraintInferred != "Memory cgroup out of memory" {
		t.Errorf("constraint %q (%s)", ko.Constraint, ko.ConstraintInferred)
	}
}

func TestHeaderlessRowsTwoKillsLateReaper(t *testing.T) {
	incs := parseString(t, harmonyTwoKills)
	if len(incs) != 2 {
		t.Fatalf("%d incidents, want 2", len(incs))
	}
	a, b := incs[0].Kernel, incs[1].Kernel
	if a.TasksTotal != 1 || a.Tasks[0].PID != 32209 || a.Tasks[0].RSSBytes != 909707*4096 || a.Tasks[0].Name != "harmony" || a.Tasks[0].UID != 1000 {
		t.Errorf("headerless row: %d %+v", a.TasksTotal, a.Tasks)
	}
	if a.Victim.PID != 32209 || a.Reaped == nil || a.Reaped.PID != 32209 || b.Reaped != nil {
		t.Errorf("first %+v reaped %+v, second reaped %+v", a.Victim, a.Reaped, b.Reaped)
	}
	if b.Victim == nil || b.Victim.PID != 68640 || !incs[1].Truncated || b.Trigger != nil {
		t.Errorf("second %+v truncated %v", b.Victim, incs[1].Truncated)
	}
}

func TestReaperAfterNextReportStarts(t *testing.T) {
	// The same harmony report (issue #3709), with the reaper line moved
	// after the next report's trigger as it lands on busy hosts.
	lines := strings.Split(strings.TrimSpace(harmonyTwoKills), "\n")
	second := "[2090066.261300] harmony invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj=0"
	s := strings.Join(append(lines[:5:5], second, lines[5]), "\n") + "\n" + strings.Join(lines[6:], "\n") + "\n"
	incs := parseString(t, s)
	if len(incs) != 2 || incs[0].Kernel.Reaped == nil || incs[1].Kernel.Reaped != nil || incs[1].Kernel.Victim.PID != 68640 {
		t.Fatalf("%d incidents: %+v", len(incs), incs)
	}
}

func TestSecondConstraintLineIsSecondEvent(t *testing.T) {
	// 5.x memcg kills with the "Killed process" line of the first lost
	// (from the two kills of testdata/kernel/cgroup-v1-6.18.dmesg's shape).
	s := "python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0\n" +
		"memory: usage 102400kB, limit 102400kB, failcnt 1473\n" +
		"oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/a,task_memcg=/a,task=python3,pid=1,uid=0\n" +
		"memory: usage 204800kB, limit 204800kB, failcnt 26\n" +
		"oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/b,task_memcg=/b,task=python3,pid=2,uid=0\n" +
		"Memory cgroup out of memory: Killed process 2 (python3) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB\n"
	incs := parseString(t, s)
	if len(incs) != 2 || incs[0].Kernel.OOMMemcg != "/a" || incs[1].Kernel.OOMMemcg != "/b" ||
		incs[0].Kernel.Memcg.LimitBytes != 102400*kib || incs[1].Kernel.Memcg.LimitBytes != 204800*kib {
		t.Fatalf("%d incidents", len(incs))
	}
}

func TestWrappedStatsCountedOnce(t *testing.T) {
	// LKML (Tetsuo Handa, 2018-11-14): one inline stats line of 300+
	// columns, pasted from a terminal 80 or 132 wide.
	for _, width := range []int{80, 132} {
		incs := parseString(t, hardWrap(readTestdata(t, "kernel/k8s-4.x-memcg-child.dmesg"), width))
		ko := incs[0].Kernel
		if ko.MemcgStats["rss"] != 95832*kib || ko.MemcgStats["rss_huge"] != 94208*kib || ko.MemcgStatsPath != "/test1" {
			t.Errorf("width %d: stats %v at %q", width, ko.MemcgStats, ko.MemcgStatsPath)
		}
	}
	// 4.x prints one line per cgroup of the subtree (they add up): wrapped,
	// each still counts once.
	two := parseString(t, hardWrap(readTestdata(t, "kernel/k8s-4.x-two-stats.dmesg"), 100))[0].Kernel
	if two.MemcgStats["rss"] != 36*kib || two.OOMMemcg != "/kubepods/burstable/podaf389229-5fc5-4617-ae95-9160d576eb49" {
		t.Errorf("two stats lines wrapped: %v %q", two.MemcgStats, two.OOMMemcg)
	}
}

func TestCutCgroupName(t *testing.T) {
	// testdata/kernel/local-v1-6.18.dmesg (captured for this project), its
	// oom-kill line cut inside the cgroup name as a lossy paste leaves it.
	full := readTestdata(t, "kernel/local-v1-6.18.dmesg")
	cut := strings.Replace(full, "oom_memcg=/tmoom-capture-10205,task_memcg=/tmoom-capture-10205,task=python3,pid=10051,uid=0", "oom_memcg=/tmoom-capt", 1)
	ko := parseString(t, cut)[0].Kernel
	if ko.OOMMemcg != "/tmoom-capture-10205" || ko.OOMMemcgTruncated {
		t.Errorf("completed from the stats header: %q truncated=%v", ko.OOMMemcg, ko.OOMMemcgTruncated)
	}
	// Without a stats header to complete it, the name stays marked as cut.
	s := "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/tmoom-capt\n"
	ko = parseString(t, s)[0].Kernel
	if ko.OOMMemcg != "/tmoom-capt" || !ko.OOMMemcgTruncated {
		t.Errorf("cut name: %q truncated=%v", ko.OOMMemcg, ko.OOMMemcgTruncated)
	}
	s = "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/a,task_memcg=/a/b\n"
	ko = parseString(t, s)[0].Kernel
	if ko.OOMMemcg != "/a" || ko.OOMMemcgTruncated || ko.TaskMemcg != "/a/b…" {
		t.Errorf("cut task memcg: %q %q truncated=%v", ko.OOMMemcg, ko.TaskMemcg, ko.OOMMemcgTruncated)
	}
	s = "Memory cgroup stats for /kubepods/burstable/pod3\n"
	if p := parseString(t, "python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0\n"+s)[0].Kernel.MemcgStatsPath; p != "/kubepods/burstable/pod3…" {
		t.Errorf("cut stats path %q", p)
	}
}

func TestHeadlessExcerpts(t *testing.T) {
	// testdata/corpus/kernel/033 (go-debos/debos issue #216): rows only.
	rows := "[   65.766239] [    282]   103   282     5951     1040    86016        0             0 systemd-resolve\n" +
		"[   65.767480] [    284]   104   284     1869      218    57344        0          -900 dbus-daemon\n" +
		"[   65.768721] [    460]     0   460     4096      250    77824        0             0 systemd-machine\n"
	incs := parseString(t, rows)
	if len(incs) != 1 || incs[0].Kernel.TasksTotal != 3 || !incs[0].Truncated || incs[0].Kernel.Tasks[0].PID != 282 {
		t.Fatalf("rows only: %+v", incs)
	}
	// One row alone is too little to call a report.
	if incs := parseString(t, strings.SplitAfter(rows, "\n")[0]); len(incs) != 0 {
		t.Errorf("one row: %d incidents", len(incs))
	}
	// testdata/corpus/kernel/013 (dotnet/coreclr issue #16906, grep of
	// syslog): two containers' memcg lines, newest first, stats before usage.
	grep := "Mar 12 18:09:55 machine-1 kernel: [615694.511492] Memory cgroup stats for /docker/7e29cfc63f603344cea233e2c2f74d8a55ea9ed7ad3c6db0ae8c042cc75f2af8: cache:5664KB rss:249452KB rss_huge:30720KB mapped_file:5660KB dirty:0KB\n" +
		"Mar 12 18:09:55 machine-1 kernel: [615694.511487] memory: usage 262144kB, limit 262144kB, failcnt 2472\n" +
		"Mar 12 18:02:34 machine-1 kernel: [615253.943304] memory: usage 262144kB, limit 262144kB, failcnt 3078\n" +
		"Mar 12 18:02:34 machine-1 kernel: [615253.943308] Memory cgroup stats for /docker/43bf7b26f090e575d16f38d7a96e5d59fa4ee372cf91a495e609fb1a33a49435: cache:5660KB rss:247920KB rss_huge:172032KB mapped_file:5660KB dirty:0KB\n"
	incs = parseString(t, grep)
	if len(incs) != 2 || incs[0].Kernel.Memcg.Failcnt != 2472 || incs[1].Kernel.Memcg.Failcnt != 3078 ||
		incs[0].Kernel.MemcgStats["rss"] != 249452*kib || incs[1].Kernel.MemcgStats["rss"] != 247920*kib ||
		incs[1].Kernel.Constraint != "CONSTRAINT_MEMCG" || incs[1].Kernel.ConstraintInferred == "" {
		t.Fatalf("%d incidents: %+v", len(incs), incs)
	}
}

func TestSyslogYearAssumed(t *testing.T) {
	// testdata/kernel/syslog-4.x-global.log (genular/pandora issue #49):
	// journalctl's short format has no year.
	inc := parseFile(t, "kernel/syslog-4.x-global.log")[0]
	if inc.Time == nil || !inc.TimeYearAssumed {
		t.Errorf("time %v, year assumed %v", inc.Time, inc.TimeYearAssumed)
	}
	if inc := parseFile(t, "kernel/local-v1-6.18.dmesg-iso")[0]; inc.TimeYearAssumed {
		t.Errorf("an ISO stamp has its year")
	}
}
