package kmsg

import (
	"testing"
	"time"
)

// Real lines: captured on this project's test machines (dmesg, -T, --time-format
// iso, -x, -r, /dev/kmsg of one OOM kill) and copied from public reports
// (syslog, journalctl, zh_CN dmesg -T, printk caller ids). The journal JSON
// line carries a captured message in journalctl -o json's field layout (no
// journald on the capture hosts).
func TestParseLine(t *testing.T) {
	utc := ParseOptions{Location: time.UTC, Year: 2026}
	tests := []struct {
		in       string
		text     string
		uptime   time.Duration // -1: none
		wall     string        // RFC 3339 in UTC, "" for none
		host     string
		ident    string
		priority int
	}{
		{"[  816.908500] Memory cgroup out of memory: Killed process 19335 (python3)", "Memory cgroup out of memory: Killed process 19335 (python3)", 816908500 * time.Microsecond, "", "", "", -1},
		{"[Sun Nov 29 22:44:14 2026] python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0", "python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0", -1, "2026-11-29T22:44:14Z", "", "", -1},
		{"[四 3月 18 18:47:12 2021] Task in /kubepods/pod37 killed as a result of limit of /kubepods/pod37", "Task in /kubepods/pod37 killed as a result of limit of /kubepods/pod37", -1, "2021-03-18T18:47:12Z", "", "", -1},
		{"[Wed May 15 14:03:08 2019] Out of memory: Kill process 83446 (machine) score 250 or sacrifice child", "Out of memory: Kill process 83446 (machine) score 250 or sacrifice child", -1, "2019-05-15T14:03:08Z", "", "", -1},
		{"2026-11-29T22:44:14,845852+00:00 python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL)", "python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL)", -1, "2026-11-29T22:44:14.845852Z", "", "", -1},
		{"kern  :warn  : [ 1043.845852] python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL)", "python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL)", 1043845852 * time.Microsecond, "", "", "", 4},
		{"<4>[ 1043.845852] python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL)", "python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL)", 1043845852 * time.Microsecond, "", "", "", 4},
		{"4,664,1043845852,-;python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL)", "python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL)", 1043845852 * time.Microsecond, "", "", "kernel", 4},
		{"6,22743,6115623303887,-;Task in /kubepods/burstable/pode501 killed as a result of limit of /kubepods/burstable/pode501", "Task in /kubepods/burstable/pode501 killed as a result of limit of /kubepods/burstable/pode501", 6115623303887 * time.Microsecond, "", "", "kernel", 6},
		{"May 07 21:43:54 doom kernel: Out of memory: Kill process 27438 (R) score 31 or sacrifice child", "Out of memory: Kill process 27438 (R) score 31 or sacrifice child", -1, "2026-05-07T21:43:54Z", "doom", "kernel", -1},
		{"May  6 10:02:51 iZuf66b59tpzdaxbchl3d4Z kernel: [1467990.340288] Killed process 17909 (procon)", "Killed process 17909 (procon)", 1467990340288 * time.Microsecond, "2026-05-06T10:02:51Z", "iZuf66b59tpzdaxbchl3d4Z", "kernel", -1},
		{"2026-04-12T19:04:42+0100 host systemd-oomd[939]: Killed /user.slice/app.scope due to memory pressure", "Killed /user.slice/app.scope due to memory pressure", -1, "2026-04-12T18:04:42Z", "host", "systemd-oomd", -1},
		{"[  244.946537][ T3106] Out of memory: Killed process 4526 (dhclient)", "Out of memory: Killed process 4526 (dhclient)", 244946537 * time.Microsecond, "", "", "", -1},
		{`{"__REALTIME_TIMESTAMP":"1764455502413325","_SOURCE_MONOTONIC_TIMESTAMP":"31413325","_TRANSPORT":"kernel","_HOSTNAME":"gpu1","PRIORITY":"3","MESSAGE":"Memory cgroup out of memory: Killed process 506 (python3)"}`, "Memory cgroup out of memory: Killed process 506 (python3)", 31413325 * time.Microsecond, "2025-11-29T22:31:42.413325Z", "gpu1", "kernel", 3},
		{"[2024-03-26 16:50:50,221] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -9) local_rank: 0 (pid: 11127)", "torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -9) local_rank: 0 (pid: 11127)", -1, "2024-03-26T16:50:50.221Z", "", "", -1},
		{"[rank0]: torch.OutOfMemoryError: CUDA out of memory.", "[rank0]: torch.OutOfMemoryError: CUDA out of memory.", -1, "", "", "", -1},
		{"RuntimeError: DataLoader worker (pid 1285) is killed by signal: Killed.", "RuntimeError: DataLoader worker (pid 1285) is killed by signal: Killed.", -1, "", "", "", -1},
	}
	for _, tc := range tests {
		l := ParseLine([]byte(tc.in), utc)
		if l.Text != tc.text {
			t.Errorf("%q: text %q, want %q", tc.in, l.Text, tc.text)
		}
		if (tc.uptime >= 0) != l.HasUptime || tc.uptime >= 0 && l.Uptime != tc.uptime {
			t.Errorf("%q: uptime %v (%v), want %v", tc.in, l.Uptime, l.HasUptime, tc.uptime)
		}
		wall := ""
		if !l.Wall.IsZero() {
			wall = l.Wall.UTC().Format(time.RFC3339Nano)
		}
		if wall != tc.wall {
			t.Errorf("%q: wall %q, want %q", tc.in, wall, tc.wall)
		}
		if l.Host != tc.host || l.Ident != tc.ident || l.Priority != tc.priority {
			t.Errorf("%q: host %q ident %q prio %d", tc.in, l.Host, l.Ident, l.Priority)
		}
		if l.Prefixed != (tc.text != tc.in) {
			t.Errorf("%q: prefixed %v", tc.in, l.Prefixed)
		}
	}
}

func TestUptimeToWall(t *testing.T) {
	boot := time.Date(2026, 11, 29, 22, 26, 51, 0, time.UTC)
	l := ParseLine([]byte("[ 1043.845852] python3 invoked oom-killer:"), ParseOptions{BootTime: boot})
	if want := boot.Add(1043845852 * time.Microsecond); !l.Wall.Equal(want) {
		t.Errorf("wall %v, want %v", l.Wall, want)
	}
}

func TestSyslogYearInference(t *testing.T) {
	now := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	l := ParseLine([]byte("Dec 31 23:59:00 node1 kernel: Out of memory: Killed process 1 (x)"), ParseOptions{Now: now, Location: time.UTC})
	if l.Wall.Year() != 2025 || !l.YearAssumed {
		t.Errorf("December seen in January belongs to last year: %v (assumed %v)", l.Wall, l.YearAssumed)
	}
	// dmesg -T and ISO stamps carry their year.
	for _, s := range []string{"[Sun Nov 29 22:44:14 2026] x", "2026-11-29T22:44:14,845852+00:00 x"} {
		if l := ParseLine([]byte(s), ParseOptions{Now: now}); l.Wall.IsZero() || l.YearAssumed {
			t.Errorf("%q: wall %v, year assumed %v", s, l.Wall, l.YearAssumed)
		}
	}
}

func TestMonthNamesByLocale(t *testing.T) {
	// strftime %b in common locales (glibc): de_DE, fr_FR, es_ES, ja_JP, ru_RU.
	for tok, want := range map[string]int{"Dez": 12, "déc.": 12, "dic": 12, "11月": 11, "мар": 3, "Okt": 10, "févr.": 2, "juil.": 7, "juin": 6} {
		if got := monthOf(tok); got != want {
			t.Errorf("monthOf(%q) = %d, want %d", tok, got, want)
		}
	}
}

func TestSplitGlued(t *testing.T) {
	b := []byte("[30104.280046] oom-kill:constraint=CONSTRAINT_NONE,task=node,pid=4294,uid=1001[30104.280053] Out of memory: Kill process 4294 (node) score 4 or sacrifice child")
	i := SplitGlued(b)
	if i < 0 || string(b[i:i+14]) != "[30104.280053]" {
		t.Fatalf("split at %d", i)
	}
	if SplitGlued([]byte("May  6 10:02:51 h kernel: [1467990.340288] Killed process 17909 (procon)")) >= 0 {
		t.Error("a syslog line keeping the kernel stamp is one record")
	}
}
