package supervisor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/jobcgroup"
)

// The test binary doubles as the trampoline, as torchmem does in real runs.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[len(os.Args)-1] == TrampolineArg {
		os.Exit(Trampoline(os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[len(os.Args)-1] == WitnessArg {
		os.Exit(Witness())
	}
	os.Exit(m.Run())
}

type runOut struct {
	res            *Result
	stdout, notice string
}

func runJob(t *testing.T, cfg Config) runOut {
	t.Helper()
	dir := t.TempDir()
	out, _ := os.Create(filepath.Join(dir, "stdout"))
	errf, _ := os.Create(filepath.Join(dir, "stderr"))
	var notices strings.Builder
	cfg.Self, cfg.Stdout, cfg.Stderr, cfg.Notices = os.Args[0], out, errf, &notices
	cfg.Stdin, _ = os.Open(os.DevNull)
	if cfg.CgroupName == "" {
		cfg.CgroupName = fmt.Sprintf("test-%d-%d", os.Getpid(), time.Now().UnixNano())
	}
	cfg.Env = os.Environ()
	if cfg.Interval == 0 {
		cfg.Interval = 100 * time.Millisecond
	}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out.Name())
	t.Logf("notices:\n%s", notices.String())
	return runOut{res: res, stdout: string(b), notice: notices.String()}
}

// cgroupOK skips tests that need a writable memory cgroup.
func cgroupOK(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for a job cgroup")
	}
	g, _, err := jobcgroup.Create(jobcgroup.Options{ProcRoot: "/proc", Name: fmt.Sprintf("probe-%d", os.Getpid())})
	if err != nil {
		t.Skipf("no writable memory cgroup: %v", err)
	}
	g.Delete()
}

func TestExitStatusLikeShell(t *testing.T) {
	for _, c := range []struct {
		script string
		want   int
		cause  string
	}{
		{"echo hi", 0, CauseOK},
		{"exit 3", 3, CauseExitCode},
		{"kill -KILL $$", 137, CauseSignal},
		{"kill -SEGV $$", 139, CauseSignal},
	} {
		for _, cg := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/cgroup=%v", c.script, cg), func(t *testing.T) {
				if cg {
					cgroupOK(t)
				}
				o := runJob(t, Config{Argv: []string{"/bin/sh", "-c", c.script}, Cgroup: cg})
				if o.res.ExitCode != c.want || o.res.Summary.Cause != c.cause {
					t.Fatalf("exit %d cause %s, want %d %s", o.res.ExitCode, o.res.Summary.Cause, c.want, c.cause)
				}
			})
		}
	}
}

func TestCommandNotFound(t *testing.T) {
	o := runJob(t, Config{Argv: []string{"/nonexistent/torchmem-no-such-cmd"}})
	if o.res.ExitCode != 127 {
		t.Fatalf("exit %d, want 127", o.res.ExitCode)
	}
}

func TestSIGTERMForwarded(t *testing.T) {
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	script := fmt.Sprintf(`trap 'echo got TERM; exit 7' TERM; touch %s; while :; do sleep 0.05; done`, ready)
	go func() {
		for i := 0; i < 400; i++ {
			if _, err := os.Stat(ready); err == nil {
				syscall.Kill(os.Getpid(), syscall.SIGTERM)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	o := runJob(t, Config{Argv: []string{"/bin/sh", "-c", script}})
	if o.res.ExitCode != 7 || !strings.Contains(o.stdout, "got TERM") {
		t.Fatalf("exit %d stdout %q", o.res.ExitCode, o.stdout)
	}
}

func TestOrphansReapedAndCgroupRemoved(t *testing.T) {
	cgroupOK(t)
	// Like DataLoader workers outliving a crashed main process.
	o := runJob(t, Config{Argv: []string{"/bin/sh", "-c", "sleep 300 & sleep 300 & echo started"}, Cgroup: true})
	if o.res.ExitCode != 0 || o.res.Summary.OrphansKilled != 2 {
		t.Fatalf("exit %d orphans %d", o.res.ExitCode, o.res.Summary.OrphansKilled)
	}
	if _, err := os.Stat(filepath.Join("/sys/fs/cgroup/memory", o.res.Summary.Cgroup)); !os.IsNotExist(err) && o.res.Summary.Cgroup != "" {
		// The path is relative to the hierarchy; removal is checked by Delete's error notice.
		if strings.Contains(o.notice, "not removed") {
			t.Fatalf("cgroup left: %s", o.notice)
		}
	}
	out, _ := exec.Command("pgrep", "-f", "sleep 300").Output()
	_ = out // other tests' sleepers may exist; the count above is the check
}

func TestOOMKillInCgroup(t *testing.T) {
	cgroupOK(t)
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	max := int64(200 << 20)
	o := runJob(t, Config{
		Argv:      []string{py, "-c", "a=[]\nwhile True: a.append(bytearray(16<<20))"},
		Cgroup:    true,
		Limits:    jobcgroup.Limits{MemoryMax: &max},
		KernelLog: KmsgLog("/proc"),
	})
	s := o.res.Summary
	var buf strings.Builder
	s.Print(&buf, "test")
	t.Log(buf.String())
	if o.res.ExitCode != 137 || s.Cause != CauseCgroupOOMKill {
		t.Fatalf("exit %d cause %s", o.res.ExitCode, s.Cause)
	}
	if len(s.Victims) == 0 || !s.Victims[0].Main || s.CgroupLimit == nil || *s.CgroupLimit != max {
		t.Fatalf("victims %+v limit %v", s.Victims, s.CgroupLimit)
	}
	text := buf.String()
	for _, want := range []string{"200.00 MiB", "oom_kill 1", "victim main process", "--memory-max"} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
}
