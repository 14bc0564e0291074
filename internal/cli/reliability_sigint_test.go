package cli

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY returns a new pseudo-terminal's master and slave.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("ptsname: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open pts: %v", err)
	}
	return m, s
}

// waitLines waits until file has n lines and returns them.
func waitLines(path string, n int, d time.Duration) []string {
	deadline := time.Now().Add(d)
	for {
		b, _ := os.ReadFile(path)
		lines := strings.Fields(string(b))
		if len(lines) >= n || time.Now().After(deadline) {
			return lines
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// syncBuf collects what torchmem writes to the terminal.
type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuf) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// sigintOnTerminal runs a job that counts its SIGINTs under torchmem on a
// new terminal, lets send deliver one SIGINT, and returns how many the
// job got and what torchmem printed.
func sigintOnTerminal(t *testing.T, bin string, send func(torchmem *os.Process, master *os.File)) (int, string) {
	master, slave := openPTY(t)
	defer master.Close()
	var out syncBuf
	go io.Copy(&out, master)
	dir := t.TempDir()
	got, pidf := filepath.Join(dir, "got"), filepath.Join(dir, "pid")
	script := fmt.Sprintf(`trap 'echo INT >> %s' INT; echo $$ > %s; while :; do sleep 0.05; done`, got, pidf)
	cmd := exec.Command(bin, "run", "--no-history", "--no-hook", "--", "/bin/sh", "-c", script)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	// A session of its own with the pty as controlling terminal: torchmem
	// is then its foreground process group, as when typed at a shell.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	defer cmd.Wait()
	defer cmd.Process.Kill()
	if waitLines(pidf, 1, 10*time.Second) == nil {
		t.Fatal("the job did not start")
	}
	time.Sleep(200 * time.Millisecond)
	send(cmd.Process, master)
	n := len(waitLines(got, 1, 3*time.Second))
	time.Sleep(500 * time.Millisecond) // a second, duplicate SIGINT would land meanwhile
	n = len(waitLines(got, n, 0))
	_ = cmd.Process.Signal(syscall.SIGTERM) // twice: the job is killed at once
	time.Sleep(100 * time.Millisecond)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	return n, out.String()
}

// On a terminal the job shares torchmem's (foreground) process group: a
// Ctrl-C reaches it from the terminal and must not be sent again, but a
// `kill -INT` of torchmem alone must be forwarded.
func TestReliabilitySIGINTByKillOnTerminal(t *testing.T) {
	bin, _ := reliabilityBuild(t)
	killed, out1 := sigintOnTerminal(t, bin, func(p *os.Process, _ *os.File) { _ = p.Signal(syscall.SIGINT) })
	if killed != 1 || !strings.Contains(out1, "forwarded SIGINT to the job") {
		t.Errorf("kill -INT of torchmem: the job got %d SIGINT (want 1)\n%s", killed, out1)
	}
	typed, out2 := sigintOnTerminal(t, bin, func(_ *os.Process, m *os.File) { m.Write([]byte{3}) })
	if typed != 1 || !strings.Contains(out2, "the job got SIGINT") {
		t.Errorf("Ctrl-C: the job got %d SIGINT (want 1)\n%s", typed, out2)
	}
	reliability(t, "SIGINT by kill to torchmem on a terminal", "forwarded: the job gets 1; a Ctrl-C is not sent again: 1",
		fmt.Sprintf("kill -INT: the job got %d (torchmem: forwarded %v); Ctrl-C: %d (torchmem: not resent %v)",
			killed, strings.Contains(out1, "forwarded SIGINT"), typed, strings.Contains(out2, "the job got SIGINT")))
}
