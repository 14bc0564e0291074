package oomexplain

import (
	"strings"
	"testing"
)

// Reports damaged by the way they were pasted, copied from public sources
// (corpus/kernel.jsonl has each one's labels):
//
//	mobyReworded: moby/moby issue #47418 (dmesg -T, altered by a
//	  translation tool: "Process stopped", "liquid=999", corpus kernel/056)
//	centosGlued: pjolsson.com/smcp/10662.html (CentOS 7 /var/log/messages
//	  quoted in a blog post, two records on one line, corpus kernel/058)
//	npdEvent: kubernetes/node-problem-detector issue #766 (an Event's JSON
//	  quoting the kernel's line, corpus kernel/060)
//	rpiPadded: theyosh/TerrariumPI issue #155 (a Raspberry Pi's dmesg, its
//	  terminal's wraps copied as runs of spaces, corpus kernel/054)
const mobyReworded = `[Tue Feb 20 19:15:36 2024] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/docker/e9d912458f1530f0d9f586ab3bdca1015f45cbb5cd59cddde 5 a33d7714fda280,task=python,pid= 2953 , liquid=999
[Tue Feb 20 19:15:36 2024] Out of memory: Process stopped 2953 (python) total-vm:8142876kB, anon-rss:6719676kB, file-rss:4kB, shmem-rss:0kB, UID:999 pgtables: 13660kB oom_score_adj:0
`

const centosGlued = "Out of memory: Kill process 5372 (mongod) score 130 or sacrifice child Killed process 5372 (mongod), UID 0, total-vm:2539052kB, anon-rss:2117096kB, file-rss:0kB, shmem-rss:0kB\n"

const npdEvent = `    "reason": "OOMKilling",
    "message": "Memory cgroup out of memory: Killed process 3504804 (kubectl) total-vm:753508kB, anon-rss:58776kB, file-rss:29400kB, shmem-rss:0kB, UID:0 pgtables:288kB oom_score_adj:999",
    "source": {
      "component": "kernel-monitor",
`

const rpiPadded = `[73353.819578] [ 5105]  1001  5105     9913     1200      15       0     2080                                                                                                                                  0 python2.7
[73353.819584] [ 5196]     0  5196     2476      282      10       0       32                                                                                                                                  0 pigpiod
[73353.819590] [ 5203]  1000  5203   262737   208012     498       0    14184                                                                                                                                  0 python
[73353.819594] Out of memory: Kill process 5203 (python) score 891 or sacrifice                                                                                                                      child
[73353.819611] Killed process 5203 (python) total-vm:1050948kB, anon-rss:830288k                                                                                                                     B, file-rss:1760kB, shmem-rss:0kB
[73353.944108] oom_reaper: reaped process 5203 (python), now anon-rss:0kB, file-                                                                                                                     rss:0kB, shmem-rss:0kB
`

// victimOf parses s and returns its only incident's kernel report.
func victimOf(t *testing.T, s string) *KernelOOM {
	t.Helper()
	incs := parseString(t, s)
	if len(incs) != 1 || incs[0].Kernel == nil {
		t.Fatalf("%d incidents %s, want one kernel report", len(incs), kindsOf(incs))
	}
	return incs[0].Kernel
}

func TestKillLineReworded(t *testing.T) {
	tests := []struct {
		name, text string
		pid        int
		comm       string
		anonKB     int64
	}{
		{"with its oom-kill line", mobyReworded, 2953, "python", 6719676},
		{"alone", lastLine(mobyReworded), 2953, "python", 6719676},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := victimOf(t, tc.text).Victim
			if v == nil || v.PID != tc.pid || v.Comm != tc.comm || !ptrEq(v.AnonRSSBytes, tc.anonKB*kib) {
				t.Errorf("victim %+v, want %d (%s) anon-rss %dkB", v, tc.pid, tc.comm, tc.anonKB)
			}
		})
	}
	for _, s := range []string{
		"oom_reaper: reaped process 5203 (python), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB",
		"python (pid 2953) total-vm:8142876kB",
		"Out of memory: Process stopped (python) total-vm:8142876kB",
	} {
		if killedAt(s) >= 0 {
			t.Errorf("%q read as a kill line", s)
		}
	}
}

// lastLine is s's last line, the report's others cut off.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1] + "\n"
}

func TestGluedSelectionAndKill(t *testing.T) {
	ko := victimOf(t, centosGlued)
	if s := ko.Selected; s == nil || s.PID != 5372 || s.Comm != "mongod" || !ptrEq(s.Score, 130) {
		t.Errorf("selected %+v, want 5372 (mongod) score 130", s)
	}
	if v := ko.Victim; v == nil || v.PID != 5372 || v.Comm != "mongod" || !ptrEq(v.AnonRSSBytes, 2117096*kib) {
		t.Errorf("victim %+v, want 5372 (mongod) anon-rss 2117096kB", v)
	}
	if ko.Constraint != "" {
		t.Errorf("constraint %q: the global wording names none", ko.Constraint)
	}
	for _, s := range []string{
		"Killed process 5372 (mongod) total-vm:2539052kB, anon-rss:2117096kB",
		"Killed process 5372 (mongod) total-vm:2539052kB ... Out of memory: Kill process 1 (x) score 1 or sacrifice child",
	} {
		if sel, ok := gluedSelection(s); ok {
			t.Errorf("%q: selection %q read before the kill", s, sel)
		}
	}
}

func TestMemcgWordingQuoted(t *testing.T) {
	tests := []struct {
		name, text, constraint string
	}{
		{"inside an Event's message", npdEvent, "CONSTRAINT_MEMCG"},
		{"at the line's start", "Memory cgroup out of memory: Killed process 3504804 (kubectl) total-vm:753508kB, anon-rss:58776kB\n", "CONSTRAINT_MEMCG"},
		{"selection inside a message", `"message": "Memory cgroup out of memory: Kill process 5203 (python) score 891 or sacrifice child"` + "\n", "CONSTRAINT_MEMCG"},
		{"global wording", `"message": "Out of memory: Killed process 3504804 (kubectl) total-vm:753508kB, anon-rss:58776kB"` + "\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ko := victimOf(t, tc.text)
			if ko.Constraint != tc.constraint {
				t.Errorf("constraint %q, want %q", ko.Constraint, tc.constraint)
			}
		})
	}
	inc := parseString(t, npdEvent)[0]
	if v := inc.Explanation.Verdict; v != VerdictCgroupLimit {
		t.Errorf("verdict %s, want cgroup_limit: %s", v, inc.Explanation.Summary)
	}
}

func TestWrapPadding(t *testing.T) {
	ko := victimOf(t, rpiPadded)
	if s := ko.Selected; s == nil || s.PID != 5203 || !ptrEq(s.Score, 891) {
		t.Errorf("selected %+v, want 5203 score 891", s)
	}
	if v := ko.Victim; v == nil || v.PID != 5203 || !ptrEq(v.AnonRSSBytes, 830288*kib) || !ptrEq(v.FileRSSBytes, 1760*kib) {
		t.Errorf("victim %+v, want 5203 anon-rss 830288kB file-rss 1760kB", v)
	}
	if r := ko.Reaped; r == nil || !ptrEq(r.FileRSSBytes, 0) {
		t.Errorf("reaped %+v, want file-rss 0kB", r)
	}
	if len(ko.Tasks) != 3 || ko.Tasks[0].PID != 5203 || ko.Tasks[0].RSSBytes != 208012*4096 || ko.Tasks[0].Name != "python" || ko.Tasks[0].OOMScoreAdj != 0 {
		t.Errorf("tasks %+v", ko.Tasks)
	}
	pad := strings.Repeat(" ", 40)
	for _, tc := range []struct{ in, want string }{
		{"or sacrifice" + pad + "child", "or sacrifice child"},
		{"anon-rss:830288k" + pad + "B, file-rss:1760kB", "anon-rss:830288kB, file-rss:1760kB"},
		{"     2080" + pad + "0 python2.7", "     2080 0 python2.7"},
		{"[ 5105]  1001  5105     9913     1200      15       0     2080             0 python2.7", "[ 5105]  1001  5105     9913     1200      15       0     2080             0 python2.7"},
		{pad + "indented", pad + "indented"},
		{"trailing" + pad, "trailing" + pad},
	} {
		if got := unpad(tc.in, 15); got != tc.want {
			t.Errorf("unpad(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
