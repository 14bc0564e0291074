package hook

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func listenTest(t *testing.T, o Options) *Server {
	t.Helper()
	dir, err := os.MkdirTemp("", "tms")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	srv, err := Listen(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func next(t *testing.T, srv *Server) Message {
	t.Helper()
	select {
	case m := <-srv.Messages():
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no message")
		return Message{}
	}
}

func TestServerLinesCommandsDisconnect(t *testing.T) {
	srv := listenTest(t, Options{})
	if fi, err := os.Stat(srv.Path()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode: %v %v", fi.Mode(), err)
	}
	c, err := net.Dial("unix", srv.Path())
	if err != nil {
		t.Fatal(err)
	}
	lines := []string{
		`{"v":1,"type":"hello","pid":1,"worker":false,"torch":"1.13.0"}`,
		`garbage`,
		`{"v":1,"type":"stats","t":1,"` + strings.Repeat("x", MaxLineBytes+10) + `":1}`,
		`{"v":1,"type":"stats","t":2,"step":7,"cuda_initialized":false}`,
	}
	c.Write([]byte(strings.Join(lines, "\n") + "\n"))
	m := next(t, srv)
	if m.Type != TypeHello || m.Peer.PID != os.Getpid() || m.Peer.UID != os.Getuid() {
		t.Fatalf("first message %+v", m)
	}
	if m := next(t, srv); m.Type != TypeStats || *m.Stats.Step != 7 {
		t.Fatalf("garbage and the over-long line should be skipped, got %+v", m)
	}
	id, err := srv.Send(os.Getpid(), Command{Type: CmdCleanup})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := bufio.NewReader(c).ReadString('\n')
	if want := `{"v":1,"type":"cleanup","id":` + itoa(int(id)) + "}\n"; got != want {
		t.Fatalf("command line %q, want %q", got, want)
	}
	if pids := srv.Broadcast(Command{Type: CmdResetPeaks}); len(pids) != 1 {
		t.Fatalf("broadcast reached %v", pids)
	}
	c.Close()
	if m := next(t, srv); m.Type != TypeDisconnect || m.Peer.PID != os.Getpid() {
		t.Fatalf("want disconnect, got %+v", m)
	}
	if _, err := srv.Send(os.Getpid(), Command{Type: CmdCleanup}); err == nil {
		t.Fatal("send to a gone peer succeeded")
	}
}

func TestServerBroadcastSkipsWorkers(t *testing.T) {
	srv := listenTest(t, Options{})
	c, _ := net.Dial("unix", srv.Path())
	defer c.Close()
	c.Write([]byte(`{"v":1,"type":"hello","pid":1,"worker":true}` + "\n"))
	next(t, srv)
	if pids := srv.Broadcast(Command{Type: CmdCleanup}); len(pids) != 0 {
		t.Fatalf("broadcast reached a worker: %v", pids)
	}
}

func TestServerCloseWithLaggingConsumer(t *testing.T) {
	srv := listenTest(t, Options{Buffer: 1})
	c, _ := net.Dial("unix", srv.Path())
	defer c.Close()
	for i := 0; i < 5; i++ { // nobody reads: stats are dropped, the hello blocks
		c.Write([]byte(`{"v":1,"type":"stats","t":1}` + "\n"))
	}
	c.Write([]byte(`{"v":1,"type":"hello","pid":1}` + "\n"))
	time.Sleep(100 * time.Millisecond)
	done := make(chan error)
	go func() { done <- srv.Close() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hung on a lagging consumer")
	}
	if srv.Dropped() < 4 {
		t.Fatalf("dropped %d stats", srv.Dropped())
	}
	if _, err := os.Stat(srv.Path()); !os.IsNotExist(err) {
		t.Fatal("socket left behind")
	}
}

func TestListenPathTooLong(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 120))
	if _, err := Listen(dir, Options{}); err == nil || !strings.Contains(err.Error(), "107-byte") {
		t.Fatalf("err = %v", err)
	}
}

func TestInstallWritesPrivateTree(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	env, err := Install(dir, InstallOptions{RecordHistory: 5000})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"python/sitecustomize.py", "python/torchmem_hook/__init__.py", "python/torchmem_hook/_agent.py"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v", fi.Mode())
	}
	joined := strings.Join(env, " ")
	for _, want := range []string{"PYTHONPATH=" + filepath.Join(dir, "python"), EnvSocket + "=" + filepath.Join(dir, SocketName),
		EnvInterval + "=1", EnvRecordHistory + "=5000", EnvStepMaxHz + "=20"} {
		if !strings.Contains(joined, want) {
			t.Errorf("env %v lacks %s", env, want)
		}
	}
}
