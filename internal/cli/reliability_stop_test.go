package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stopJob is a torchmem run started for a stop check: its job writes its
// PID to a file; TMPDIR is private, so the run directory is found there.
type stopJob struct {
	cmd            *exec.Cmd
	tmp, cgroupDir string
	jobPID         int
	stderr         *os.File // a file, not a pipe: the job's children inherit it and Wait would wait for them
}

func (j *stopJob) errText() string {
	b, _ := os.ReadFile(j.stderr.Name())
	return string(b)
}

// startStopJob runs prefix... bin run --no-history args... -- sh -c script,
// where script may use $PIDF, and waits until the job wrote its PID.
func startStopJob(t *testing.T, bin string, prefix []string, args []string, script string) *stopJob {
	t.Helper()
	j := &stopJob{tmp: t.TempDir()}
	pidf := filepath.Join(j.tmp, "job.pid")
	argv := append(append(append(prefix, bin, "run", "--no-history"), args...), "--", "/bin/sh", "-c", script)
	j.cmd = exec.Command(argv[0], argv[1:]...)
	j.cmd.Env = append(os.Environ(), "TMPDIR="+j.tmp, "PIDF="+pidf)
	j.stderr, _ = os.Create(filepath.Join(j.tmp, "stderr"))
	j.cmd.Stderr = j.stderr
	if err := j.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1000 && j.jobPID == 0; i++ {
		b, _ := os.ReadFile(pidf)
		fmt.Sscan(string(b), &j.jobPID)
		time.Sleep(10 * time.Millisecond)
	}
	if j.jobPID == 0 {
		t.Fatalf("the job did not start: %s", j.errText())
	}
	j.cgroupDir = memoryCgroupDir(j.jobPID)
	return j
}

// memoryCgroupDir is the directory of pid's memory cgroup (v1 memory
// line, else the v2 one).
func memoryCgroupDir(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	v2 := ""
	for _, l := range strings.Split(string(b), "\n") {
		p := strings.SplitN(l, ":", 3)
		switch {
		case len(p) != 3:
		case strings.Contains(","+p[1]+",", ",memory,"):
			return filepath.Join("/sys/fs/cgroup/memory", p[2])
		case p[1] == "":
			v2 = filepath.Join("/sys/fs/cgroup", p[2])
		}
	}
	return v2
}

// alive: the process exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X')
}

// leftovers lists what remains of the run: live job processes, its
// cgroup, run directories.
func (j *stopJob) leftovers(pids ...int) []string {
	var out []string
	for _, p := range append(pids, j.jobPID) {
		if alive(p) {
			out = append(out, fmt.Sprintf("process %d", p))
		}
	}
	if _, err := os.Stat(j.cgroupDir); err == nil && strings.Contains(j.cgroupDir, "/torchmem/") {
		out = append(out, "cgroup "+j.cgroupDir)
	}
	dirs, _ := filepath.Glob(filepath.Join(j.tmp, "torchmem-*"))
	return append(out, dirs...)
}

// waitGone polls until nothing is left (up to d) and returns what is.
func (j *stopJob) waitGone(d time.Duration, pids ...int) []string {
	deadline := time.Now().Add(d)
	for {
		left := j.leftovers(pids...)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (j *stopJob) wait() (int, time.Duration) {
	t0 := time.Now()
	err := j.cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
		if ws := ee.Sys().(syscall.WaitStatus); ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	}
	return code, time.Since(t0)
}

func stopCheckSetup(t *testing.T) string {
	if os.Geteuid() != 0 {
		t.Skip("needs a job cgroup (root)")
	}
	bin, _ := reliabilityBuild(t)
	return bin
}

func TestReliabilityTimeoutStopsJob(t *testing.T) {
	bin := stopCheckSetup(t)
	if _, err := exec.LookPath("timeout"); err != nil {
		t.Skip("no timeout(1)")
	}
	j := startStopJob(t, bin, []string{"timeout", "-k", "3", "4"}, nil, `echo $$ > $PIDF; exec sleep 100`)
	code, _ := j.wait()
	left := j.waitGone(2 * time.Second)
	if code != 124 || len(left) > 0 {
		t.Errorf("timeout -k 3 4 torchmem run -- sleep 100: exit %d, left %v\n%s", code, left, j.errText())
	}
	reliability(t, "timeout -k 3 4 torchmem run -- sleep 100", "exit 124; no job process, cgroup or run directory left",
		fmt.Sprintf("exit %d; left: %s", code, orNone(left)))
}

func TestReliabilitySIGTERMStopsJob(t *testing.T) {
	bin := stopCheckSetup(t)
	// The job ignores SIGTERM: only the SIGKILL after --grace stops it.
	j := startStopJob(t, bin, nil, []string{"--grace", "1s"}, `trap "" TERM; echo $$ > $PIDF; sleep 100 & echo $! >> $PIDF.kids; wait`)
	_ = j.cmd.Process.Signal(syscall.SIGTERM)
	code, took := j.wait()
	left := j.waitGone(2 * time.Second)
	if code != 137 || len(left) > 0 || took > 8*time.Second {
		t.Errorf("SIGTERM, job ignores it, --grace 1s: exit %d after %s, left %v\n%s", code, took, left, j.errText())
	}
	obs := fmt.Sprintf("exit %d after %.1fs; left: %s", code, took.Seconds(), orNone(left))

	// A second SIGTERM does not wait for the grace period.
	j = startStopJob(t, bin, nil, []string{"--grace", "60s"}, `trap "" TERM; echo $$ > $PIDF; exec sleep 100`)
	_ = j.cmd.Process.Signal(syscall.SIGTERM)
	time.Sleep(300 * time.Millisecond)
	_ = j.cmd.Process.Signal(syscall.SIGTERM)
	code2, took2 := j.wait()
	left2 := j.waitGone(2 * time.Second)
	if code2 != 137 || len(left2) > 0 || took2 > 10*time.Second {
		t.Errorf("two SIGTERMs, --grace 60s: exit %d after %s, left %v\n%s", code2, took2, left2, j.errText())
	}
	reliability(t, "SIGTERM to torchmem stops the job", "SIGKILL after --grace 1s; a 2nd SIGTERM at once (--grace 60s); nothing left",
		fmt.Sprintf("grace 1s: %s; 2nd SIGTERM: exit %d after %.1fs; left: %s", obs, code2, took2.Seconds(), orNone(left2)))
}

func TestReliabilitySIGKILLOfSupervisor(t *testing.T) {
	bin := stopCheckSetup(t)
	// The main process has a child: the parent-death signal reaches only
	// the main process; torchmem's reaper cleans up the rest at once.
	j := startStopJob(t, bin, nil, nil, `sleep 100 & echo $! > $PIDF.kid; echo $$ > $PIDF.tmp; mv $PIDF.tmp $PIDF; wait`)
	var kid int
	b, _ := os.ReadFile(filepath.Join(j.tmp, "job.pid.kid"))
	fmt.Sscan(string(b), &kid)
	defer runKillLeftover(kid)
	_ = j.cmd.Process.Signal(syscall.SIGKILL)
	j.wait()
	t0 := time.Now()
	deadline := t0.Add(2 * time.Second)
	for alive(j.jobPID) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	mainDied := !alive(j.jobPID)
	left := j.waitGone(3*time.Second, kid)
	took := time.Since(t0).Round(10 * time.Millisecond)
	if !mainDied || len(left) > 0 {
		t.Errorf("main died %v; left after %v: %v", mainDied, took, left)
	}
	reliability(t, "SIGKILL of torchmem", "the job's main process dies at once; the reaper removes the rest (child, cgroup, run directory) within seconds, no next run needed",
		fmt.Sprintf("main process died: %v; left after %v: %s", mainDied, took, orNone(left)))
}

func TestReliabilityKeepJobOnExit(t *testing.T) {
	bin := stopCheckSetup(t)
	j := startStopJob(t, bin, nil, []string{"--keep-job-on-exit"}, `echo $$ > $PIDF; exec sleep 100`)
	defer runKillLeftover(j.jobPID)
	_ = j.cmd.Process.Signal(syscall.SIGKILL)
	j.wait()
	time.Sleep(500 * time.Millisecond)
	next := exec.Command(bin, "run", "--no-history", "--", "true")
	next.Env = append(os.Environ(), "TMPDIR="+j.tmp)
	_ = next.Run()
	survived := alive(j.jobPID)
	if !survived {
		t.Error("--keep-job-on-exit: the job died with torchmem or was swept by the next run")
	}
	reliability(t, "--keep-job-on-exit", "the job outlives a SIGKILLed torchmem and the next run", fmt.Sprintf("job alive: %v", survived))
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "nothing"
	}
	return strings.Join(s, ", ")
}
