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
		s += fmt.Sprintf(" tasks=%d", ko.TasksTotal)
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
			name: "thousands separators in the kill line, wrapped task rows (kernel/019)",
			text: "[Sun Mar 30 08:24:00 2025] [   7899]     0  7899  6546210  3842522 39899136  1039052\n" +
				" 0 python\n" +
				"[Sun Mar 30 08:24:00 2025] [  11794]  1000 11794      619      468    45056        0\n" +
				" 0 init\n" +
				"[Sun Mar 30 08:24:00 2025] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/init.scope,task=python,pid=7899,uid=0\n" +
				"[Sun Mar 30 08:24:00 2025] Out of memory: Killed process 7899 (python) total-vm:26,184,840kB, anon-rss:153,700,88kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:38964kB oom_score_adj:0\n",
			want: []string{"constraint=CONSTRAINT_NONE victim=7899/python total_vm=26184840kB anon_rss=15370088kB"}, // the wrapped rows are not read yet,
		},
		{
			name: "the oom-kill summary alone names the victim (kernel/023)",
			text: "> Aug 30 06:58:55.050705 ... kernel: oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=cri-containerd-ec9e.scope,mems_allowed=0-1,oom_memcg=/lxc.payload....-lxc/kubepods.slice/kubepods-burstable.slice,task_memcg=/lxc.payload....-lxc/kubepods.slice/kubepods-burstable.slice/cri-containerd-ec9e.scope,task=pt_main_thread,pid=461754,uid=0\n",
			want: []string{"constraint=CONSTRAINT_MEMCG oom_memcg=/lxc.payload....-lxc/kubepods.slice/kubepods-burstable.slice victim=461754/pt_main_thread"},
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
