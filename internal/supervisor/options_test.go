package supervisor

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestSecondInterruptEscalates(t *testing.T) {
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	// A job that ignores SIGINT and SIGTERM: only the SIGKILL after the
	// grace period ends it.
	script := "trap '' INT TERM; touch " + ready + "; while :; do sleep 0.05; done"
	go func() {
		for i := 0; i < 400; i++ {
			if _, err := os.Stat(ready); err == nil {
				syscall.Kill(os.Getpid(), syscall.SIGINT)
				time.Sleep(100 * time.Millisecond)
				syscall.Kill(os.Getpid(), syscall.SIGINT)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	start := time.Now()
	o := runJob(t, Config{Argv: []string{"/bin/sh", "-c", script}, Grace: 300 * time.Millisecond})
	if o.res.ExitCode != 137 || !strings.Contains(o.notice, "sent SIGTERM") || !strings.Contains(o.notice, "grace period over") {
		t.Fatalf("exit %d notices %q", o.res.ExitCode, o.notice)
	}
	if time.Since(start) > 20*time.Second {
		t.Fatal("escalation did not kill the job")
	}
}

func TestOOMScoreAdjAndRlimits(t *testing.T) {
	adj := 500
	nofile, nproc := uint64(321), uint64(4321)
	o := runJob(t, Config{Argv: []string{"/bin/sh", "-c", "cat /proc/self/oom_score_adj; ulimit -n; grep 'Max processes' /proc/self/limits | awk '{print $3}'"},
		OOMScoreAdj: &adj, NoFile: &nofile, NProc: &nproc})
	if got := strings.Fields(o.stdout); strings.Join(got, " ") != "500 321 4321" {
		t.Fatalf("stdout %q", o.stdout)
	}
}

func TestNUMABinding(t *testing.T) {
	if _, err := os.Stat("/sys/devices/system/node/node0"); err != nil {
		t.Skip("no NUMA node 0 in sysfs")
	}
	tools := []string{""} // own sched_setaffinity + set_mempolicy
	if numactl, err := exec.LookPath("numactl"); err == nil {
		tools = append(tools, numactl)
	}
	for _, tool := range tools {
		o := runJob(t, Config{Argv: []string{"/bin/sh", "-c", "grep -E '^(Cpus_allowed_list|Mems_allowed_list)' /proc/self/status; cat /proc/self/numa_maps | head -1"},
			NUMA: "0", Numactl: tool})
		if o.res.ExitCode != 0 || !strings.Contains(o.stdout, "bind:0") {
			t.Fatalf("numactl=%q: exit %d stdout %q", tool, o.res.ExitCode, o.stdout)
		}
	}
	// auto on a one-node host is a no-op with a notice.
	if nodes := listNodes("/sys"); len(nodes) == 1 {
		o := runJob(t, Config{Argv: []string{"true"}, NUMA: "auto"})
		if !strings.Contains(o.notice, "one NUMA node") {
			t.Fatalf("notice %q", o.notice)
		}
	}
}

func TestMonitorOnlyWithoutCgroup(t *testing.T) {
	// A proc root whose mountinfo has no cgroup: the run goes on without
	// limits and says so in one line.
	proc := t.TempDir()
	os.MkdirAll(filepath.Join(proc, "self"), 0o755)
	os.WriteFile(filepath.Join(proc, "self", "mountinfo"), []byte("22 1 0:21 / /proc rw - proc proc rw\n"), 0o644)
	os.WriteFile(filepath.Join(proc, "self", "cgroup"), []byte("0::/\n"), 0o644)
	os.WriteFile(filepath.Join(proc, "meminfo"), []byte("MemTotal: 1000 kB\nMemAvailable: 500 kB\n"), 0o644)
	o := runJob(t, Config{Argv: []string{"/bin/sh", "-c", "exit 5"}, Cgroup: true, ProcRoot: proc})
	if o.res.ExitCode != 5 || strings.Count(o.notice, "monitor-only") != 1 {
		t.Fatalf("exit %d notices %q", o.res.ExitCode, o.notice)
	}
}

// Interactive (torchmem is the terminal's foreground group): the job stays
// in torchmem's process group, so a Ctrl-C reaches both, torchmem does not
// send the job a second SIGINT, and the second Ctrl-C escalates. (The job
// used to get a foreground group of its own: torchmem never saw a Ctrl-C.)
// The terminal is simulated by signalling the job, torchmem and its SIGINT
// witness together (a terminal signals the whole group; here that group
// is go test's too).
func TestInteractiveCtrlCEscalates(t *testing.T) {
	dir := t.TempDir()
	ready, ints := filepath.Join(dir, "ready"), filepath.Join(dir, "ints")
	script := "trap 'echo INT >> " + ints + "' INT; trap '' TERM; echo $$ > " + ready + "; while :; do sleep 0.05; done"
	ctrlC := func(job int) {
		for _, w := range witnessPIDs() {
			syscall.Kill(w, syscall.SIGINT)
		}
		syscall.Kill(job, syscall.SIGINT)
		syscall.Kill(os.Getpid(), syscall.SIGINT)
	}
	go func() {
		for i := 0; i < 400; i++ {
			b, err := os.ReadFile(ready)
			if job, _ := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && job > 0 {
				if g, _ := syscall.Getpgid(job); g != syscall.Getpgrp() {
					t.Errorf("job in process group %d, torchmem in %d", g, syscall.Getpgrp())
				}
				ctrlC(job)
				time.Sleep(300 * time.Millisecond)
				ctrlC(job)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	o := runJob(t, Config{Argv: []string{"/bin/sh", "-c", script}, Grace: 300 * time.Millisecond, Interactive: true})
	if v := o.res.Summary.Verdict; !strings.HasPrefix(v, "stopped with Ctrl-C (2×): killed by SIGKILL") {
		t.Errorf("verdict %q does not say the user stopped the job", v)
	}
	if o.res.ExitCode != 137 || !strings.Contains(o.notice, "the job got SIGINT") || !strings.Contains(o.notice, "grace period over") {
		t.Fatalf("exit %d notices %q", o.res.ExitCode, o.notice)
	}
	if b, _ := os.ReadFile(ints); strings.Count(string(b), "INT") != 2 {
		t.Errorf("the job got %d SIGINTs for 2 Ctrl-C, want 2 (none forwarded twice)", strings.Count(string(b), "INT"))
	}
}

// witnessPIDs are this process's children running as the SIGINT witness.
func witnessPIDs() []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		st, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		_, rest, _ := strings.Cut(string(st), ") ")
		if f := strings.Fields(rest); strings.HasSuffix(string(b), WitnessArg+"\x00") && len(f) > 1 && f[1] == strconv.Itoa(os.Getpid()) {
			out = append(out, pid)
		}
	}
	return out
}
