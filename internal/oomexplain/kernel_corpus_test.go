package oomexplain

import (
	"fmt"
	"strings"
	"testing"
)

// Real text from the corpus (testdata/corpus/kernel), one shape per case:
// the figures a parser fix must read from it.

// kernelFields renders what a kernel incident holds, for comparison.
func kernelFields(inc *Incident) string {
	ko := inc.Kernel
	s := "constraint=" + ko.Constraint
	if ko.Trigger != nil {
		s += " trigger=" + ko.Trigger.Comm
	}
	if ko.OOMMemcg != "" {
		s += " oom_memcg=" + ko.OOMMemcg
	}
	if v := ko.Victim; v != nil {
		s += fmt.Sprintf(" victim=%d/%s", v.PID, v.Comm)
		if v.TotalVMBytes != nil {
			s += fmt.Sprintf(" total_vm=%dkB", *v.TotalVMBytes>>10)
		}
		if v.AnonRSSBytes != nil {
			s += fmt.Sprintf(" anon_rss=%dkB", *v.AnonRSSBytes>>10)
		}
	}
	if ko.TasksTotal > 0 {
		s += fmt.Sprintf(" tasks=%d top=%s/%dkB", ko.TasksTotal, ko.Tasks[0].Name, ko.Tasks[0].RSSBytes>>10)
	}
	if rss, ok := ko.MemcgStats["rss"]; ok {
		s += fmt.Sprintf(" stats.rss=%d", rss)
	}
	if mi := ko.MemInfo; mi != nil && mi.FreeBytes != nil {
		s += fmt.Sprintf(" free=%dkB", *mi.FreeBytes>>10)
	}
	return s
}

func TestKernelParsesRealShapes(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{
			name: "thousands separators in the kill line; task rows wrapped before their name (kernel/019)",
			text: "[Sun Mar 30 08:24:00 2025] [   7899]     0  7899  6546210  3842522 39899136  1039052\n" +
				" 0 python\n" +
				"[Sun Mar 30 08:24:00 2025] [  11794]  1000 11794      619      468    45056        0\n" +
				" 0 init\n" +
				"[Sun Mar 30 08:24:00 2025] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/init.scope,task=python,pid=7899,uid=0\n" +
				"[Sun Mar 30 08:24:00 2025] Out of memory: Killed process 7899 (python) total-vm:26,184,840kB, anon-rss:153,700,88kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:38964kB oom_score_adj:0\n",
			want: []string{"constraint=CONSTRAINT_NONE victim=7899/python total_vm=26184840kB anon_rss=15370088kB tasks=2 top=python/15370088kB"},
		},
		{
			name: "one cut row alone is no report",
			text: "[Sun Mar 30 08:24:00 2025] [   7899]     0  7899  6546210  3842522 39899136  1039052\n 0 python\n",
		},
		{
			name: "the oom-kill summary alone names the victim (kernel/023)",
			text: "> Aug 30 06:58:55.050705 ... kernel: oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=cri-containerd-ec9e.scope,mems_allowed=0-1,oom_memcg=/lxc.payload....-lxc/kubepods.slice/kubepods-burstable.slice,task_memcg=/lxc.payload....-lxc/kubepods.slice/kubepods-burstable.slice/cri-containerd-ec9e.scope,task=pt_main_thread,pid=461754,uid=0\n",
			want: []string{"constraint=CONSTRAINT_MEMCG oom_memcg=/lxc.payload....-lxc/kubepods.slice/kubepods-burstable.slice victim=461754/pt_main_thread"},
		},
		{
			name: "syslog without a host name (kernel/041)",
			text: "Sep  8 06:22:08 kernel: Tasks state (memory values in pages):\n" +
				"Sep  8 06:22:08 kernel: [  pid  ]   uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name\n" +
				"Sep  8 06:22:08 kernel: [  22826]     0 22826      242        1    28672        0          -998 pause\n" +
				"Sep  8 06:22:08 kernel: [   2908]   999  2908    52015    18550   303104        0           984 gunicorn\n" +
				"Sep  8 06:22:08 kernel: oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=a863,mems_allowed=0,oom_memcg=/kubepods/burstable/podcb4794b7-954b-4831-81cf-403d83ad22a4,task_memcg=/kubepods/burstable/podcb4794b7-954b-4831-81cf-403d83ad22a4/a863,task=gunicorn,pid=2908,uid=999\n" +
				"Sep  8 06:22:08 kernel: Memory cgroup out of memory: Killed process 2908 (gunicorn) total-vm:208060kB, anon-rss:64296kB, file-rss:9904kB, shmem-rss:0kB, UID:999 pgtables:296kB oom_score_adj:984\n",
			want: []string{"constraint=CONSTRAINT_MEMCG oom_memcg=/kubepods/burstable/podcb4794b7-954b-4831-81cf-403d83ad22a4 victim=2908/gunicorn total_vm=208060kB anon_rss=64296kB tasks=2 top=gunicorn/74200kB"},
		},
		{
			name: "a bare 'kernel: ' tag, stamp and host cut (kernel/016)",
			text: "kernel: java invoked oom-killer: gfp_mask=0xd0, order=0, oom_score_adj=0\n" +
				"kernel: java cpuset=8efb22f5a09b mems_allowed=0\n" +
				"kernel: CPU: 1 PID: 9949 Comm: java Tainted: P           OE  ------------   3.10.0-327.13.1.el7.x86_64 #1\n" +
				"kernel: Call Trace:\n" +
				"kernel:  [<ffffffff8116ceee>] oom_kill_process+0x24e/0x3b0\n" +
				"kernel:  [<ffffffff811d3bb5>] mem_cgroup_oom_synchronize+0x575/0x5a0\n",
			want: []string{"constraint=CONSTRAINT_MEMCG trigger=java"},
		},
		{
			name: "a report indented by two spaces (kernel/047)",
			text: "  runc:[2:INIT] invoked oom-killer: gfp_mask=0x500cc2(GFP_HIGHUSER|__GFP_ACCOUNT), order=0, oom_score_adj=0\n" +
				"  CPU: 8 PID: 8291 Comm: runc:[2:INIT] Tainted: G        W I E     5.8.2-0.g71b519a-default #1 openSUSE Tumbleweed (unreleased)\n" +
				"  Call Trace:\n" +
				"   __alloc_pages_slowpath.constprop.0+0x954/0xa20\n" +
				"  Mem-Info:\n" +
				"  active_anon:392832 inactive_anon:182 isolated_anon:0\n" +
				"  oom-kill:constraint=CONSTRAINT_CPUSET,nodemask=(null),cpuset=docker-9976a269caec.scope,mems_allowed=4,global_oom,task_memcg=/system.slice/containerd.service,task=containerd,pid=4100,uid=0\n" +
				"  Out of memory: Killed process 4100 (containerd) total-vm:4077036kB, anon-rss:51184kB, file-rss:26016kB, shmem-rss:0kB, UID:0 pgtables:676kB oom_score_adj:0\n",
			want: []string{"constraint=CONSTRAINT_CPUSET trigger=runc:[2:INIT] victim=4100/containerd total_vm=4077036kB anon_rss=51184kB"},
		},
		{
			name: "a page fault's trace, then Mem-Info, head and kill cut (kernel/034)",
			text: "[44179.087519] [<0000000000665188>] handle_mm_fault+0x148/0x260\n" +
				"[44179.087552] [<0000000000cb2cb8>] do_sparc64_fault+0x4f8/0xa20\n" +
				"[44179.087639] [<0000000000a24108>] NG4copy_to_user+0x388/0x3c0\n" +
				"[44179.087680] Mem-Info:\n" +
				"[44179.087698] active_anon:0 inactive_anon:0 isolated_anon:0\n" +
				"[44179.087698]  active_file:23 inactive_file:30 isolated_file:0\n" +
				"[44179.087698]  slab_reclaimable:466670 slab_unreclaimable:534590\n" +
				"[44179.087698]  free:31098 free_pcp:23 free_cma:0\n",
			want: []string{"constraint= free=124392kB"},
		},
		{
			name: "Mem-Info then the task table's header (kernel/026)",
			text: "[  492.665835] Free swap  = 785668kB\n" +
				"[  492.666982] Total swap = 785668kB\n" +
				"[  492.668136] 1012736 pages RAM\n" +
				"[  492.673008] Tasks state (memory values in pages):\n" +
				"[  492.674226] [  pid  ]   uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name\n",
			want: []string{"constraint="},
		},
		{
			// The shape of warn_alloc's report (mm/page_alloc.c): the same
			// Mem-Info, after an allocation that may fail, no OOM kill.
			name: "a page allocation failure's Mem-Info is no OOM report",
			text: "[  869.207264] kworker/u16:2: page allocation failure: order:4, mode:0x40cc0(GFP_KERNEL|__GFP_COMP), nodemask=(null),cpuset=/,mems_allowed=0\n" +
				"[  869.207283] Call Trace:\n" +
				"[  869.207301]  warn_alloc.cold+0x7b/0xdf\n" +
				"[  869.207309]  __alloc_pages_slowpath.constprop.0+0xd4a/0xd90\n" +
				"[  869.207340]  kmalloc_order+0x1b/0x80\n" +
				"[  869.207380] Mem-Info:\n" +
				"[  869.207388] active_anon:1000 inactive_anon:2000 isolated_anon:0\n" +
				"[  869.207395] Free swap  = 0kB\n" +
				"[  869.207405] 4194173 pages RAM\n",
		},
		{
			name: "stamp cut at the excerpt's start; a cgroup name and a stat cut by a 178-column terminal (kernel/007)",
			text: "5193605.506728] Task in /kubepods/pod951f6bc5-c5a5-11ea-8707-80e455f266a2/024952d653ef1cd852f875a61bd27cf45cb1fd6cab3659ca7e5f12f037d99aa9 killed as a result of limit of /kubepo\n" +
				"ds/pod951f6bc5-c5a5-11ea-8707-80e455f266a2/024952d653ef1cd852f875a61bd27cf45cb1fd6cab3659ca7e5f12f037d99aa9\n" +
				"[5193605.506735] memory: usage 524288kB, limit 524288kB, failcnt 0\n" +
				"[5193605.506739] Memory cgroup stats for /kubepods/pod951f6bc5-c5a5-11ea-8707-80e455f266a2/024952d653ef1cd852f875a61bd27cf45cb1fd6cab3659ca7e5f12f037d99aa9: cache:507172KB rss:44\n" +
				"8KB rss_huge:0KB shmem:28KB mapped_file:0KB dirty:503316KB writeback:0KB swap:0KB inactive_anon:0KB active_anon:540KB inactive_file:253596KB active_file:253592KB unevictable:0KB\n" +
				"[5193605.506956] Memory cgroup out of memory: Kill process 62685 (bash) score 0 or sacrifice child\n",
			want: []string{"constraint=CONSTRAINT_MEMCG oom_memcg=/kubepods/pod951f6bc5-c5a5-11ea-8707-80e455f266a2/024952d653ef1cd852f875a61bd27cf45cb1fd6cab3659ca7e5f12f037d99aa9 stats.rss=458752"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			incs, err := Parse(strings.NewReader(tc.text), Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for i := range incs {
				if incs[i].Kernel != nil {
					got = append(got, kernelFields(&incs[i]))
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestJoinWrapped: how the two pieces of a wrapped report line are put
// back together.
func TestJoinWrapped(t *testing.T) {
	tests := []struct{ a, b, want string }{
		{"cache:507172KB rss:44", "8KB rss_huge:0KB", "cache:507172KB rss:448KB rss_huge:0KB"},                                      // kernel/007
		{"limit of /kubepo", "ds/pod951f/0249", "limit of /kubepods/pod951f/0249"},                                                  // kernel/007
		{"active_anon:44964kB inactive_anon:24kB", "active_file:800kB", "active_anon:44964kB inactive_anon:24kB active_file:800kB"}, // a word wrap
		{"Task in /kubepods/pod1", "killed as a result of limit of /kubepods", "Task in /kubepods/pod1 killed as a result of limit of /kubepods"},
		{"shmem-rss:0kB, UID:0", "pgtables:260kB oom_score_adj:0", "shmem-rss:0kB, UID:0 pgtables:260kB oom_score_adj:0"},
	}
	for _, tc := range tests {
		if got := joinWrapped(tc.a, tc.b, 61); got != tc.want {
			t.Errorf("joinWrapped(%q, %q) = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
}
