package supervisor

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/hook"
)

// The snapshot action asks each hooked process for a snapshot into the
// snapshot dir, named with {pid} for the hook to fill in.
func TestSnapshotActionAsksHookedProcesses(t *testing.T) {
	srv, err := hook.Listen(t.TempDir(), hook.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c, err := net.Dial("unix", srv.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte(`{"v":1,"type":"hello","pid":1}` + "\n"))
	<-srv.Messages()
	s := &sup{srv: srv, hk: newHookState(), cfg: Config{SnapshotDir: "/snaps"}}
	if msg, _ := s.snapshot(time.Unix(100, 0)); msg != "; snapshot requested from 1 process(es) into /snaps" {
		t.Errorf("message %q", msg)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.Contains(line, `"type":"snapshot"`) || !strings.Contains(line, `"path":"/snaps/policy-{pid}-100.pickle"`) {
		t.Fatalf("command %q, %v", line, err)
	}
}
