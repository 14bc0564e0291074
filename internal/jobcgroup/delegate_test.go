package jobcgroup

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fakeKernel writes like cgroupfs would for the v2 rule that matters here:
// a group with processes in its own cgroup.procs cannot enable controllers
// for children (EBUSY). otherPIDs are processes besides torchmem in scope.
// Writes to cgroup.procs are recorded in wrote (by path relative to
// mount), not as files, so directories stay removable as in cgroupfs.
func fakeKernel(mount, scope string, otherPIDs bool, wrote map[string]string) func(path, v string) error {
	self := strconv.Itoa(os.Getpid())
	inScope := map[string]bool{self: true}
	if otherPIDs {
		inScope["4242"] = true
	}
	return func(path, v string) error {
		rel := strings.TrimPrefix(path, mount)
		switch {
		case rel == scope+"/cgroup.subtree_control" && len(inScope) > 0:
			return unix.EBUSY
		case rel == scope+"/cgroup.procs":
			inScope[v] = true
		case strings.HasSuffix(rel, "/cgroup.procs"):
			delete(inScope, v)
		}
		if strings.HasSuffix(rel, "/cgroup.procs") {
			wrote[rel] = v
			return nil
		}
		return os.WriteFile(path, []byte(v), 0o644)
	}
}

func TestCreateV2DelegatedScope(t *testing.T) {
	scope := "/user.slice/user-1000.slice/user@1000.service/app.slice/run-r1.scope"
	procRoot, mount := fakeV2(t, scope)
	wrote := map[string]string{}
	g, _, err := Create(Options{ProcRoot: procRoot, Name: "run-1", write: fakeKernel(mount, scope, false, wrote)})
	if err != nil {
		t.Fatal(err)
	}
	if g.Path() != scope+"/torchmem/run-1" {
		t.Fatalf("group at %s, want under the delegated scope", g.Path())
	}
	if got := wrote[scope+"/"+LeafName+"/cgroup.procs"]; got != strconv.Itoa(os.Getpid()) {
		t.Fatalf("torchmem not moved into the leaf: %q", got)
	}
	for _, dir := range []string{scope, scope + "/torchmem"} {
		if b, _ := os.ReadFile(filepath.Join(mount, dir, "cgroup.subtree_control")); string(b) != "+memory" {
			t.Errorf("%s subtree_control = %q", dir, b)
		}
	}
}

func TestCreateV2ScopeWithOtherProcessesFallsBack(t *testing.T) {
	scope := "/user.slice/user-1000.slice/session-3.scope"
	procRoot, mount := fakeV2(t, scope)
	wrote := map[string]string{}
	g, _, err := Create(Options{ProcRoot: procRoot, Name: "run-2", write: fakeKernel(mount, scope, true, wrote)})
	if err != nil {
		t.Fatal(err)
	}
	if g.Path() != "/torchmem/run-2" {
		t.Fatalf("group at %s, want the root fallback", g.Path())
	}
	// The move was undone: torchmem is back in its scope, the leaf is gone.
	if _, err := os.Stat(filepath.Join(mount, scope, LeafName)); !os.IsNotExist(err) {
		t.Fatalf("leaf left behind: %v", err)
	}
	if got := wrote[scope+"/cgroup.procs"]; got != strconv.Itoa(os.Getpid()) {
		t.Fatalf("not moved back: %q", got)
	}
}
