package deploy_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// execStart returns the unit's ExecStart words and its EnvironmentFile paths.
func execStart(t *testing.T) (words, envFiles []string) {
	t.Helper()
	b, err := os.ReadFile("systemd/torchmem.service")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "ExecStart="); ok {
			words = strings.Fields(v)
		}
		if v, ok := strings.CutPrefix(line, "EnvironmentFile="); ok {
			envFiles = append(envFiles, strings.TrimPrefix(v, "-"))
		}
	}
	return words, envFiles
}

// expand does what systemd does to ExecStart: an unbraced $VAR that is a
// word of its own becomes the variable's value split at white space
// (systemd.service(5), "Command lines").
func expand(words []string, env map[string]string) []string {
	var out []string
	for _, w := range words {
		if name, ok := strings.CutPrefix(w, "$"); ok && !strings.HasPrefix(name, "{") {
			out = append(out, strings.Fields(env[name])...)
			continue
		}
		out = append(out, w)
	}
	return out
}

var serving = regexp.MustCompile(`serving https?://(\S+)/`)

// TestSystemdUnitListensWide: the unit reads /etc/sysconfig/torchmem and
// /etc/default/torchmem, and TORCHMEM_SERVE_OPTS set there as the packaged
// file's example says (a wide --listen and a token) makes the real serve
// listen on every address and ask for the token: the flags given later win.
func TestSystemdUnitListensWide(t *testing.T) {
	words, envFiles := execStart(t)
	for _, want := range []string{"/etc/sysconfig/torchmem", "/etc/default/torchmem"} {
		if !strings.Contains(strings.Join(envFiles, " "), want) {
			t.Errorf("the unit does not read %s (EnvironmentFile=%v)", want, envFiles)
		}
	}
	if testing.Short() {
		t.Skip("builds and runs torchmem serve; skipped in -short")
	}
	dir := t.TempDir()
	bin := torchmem(t)
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte("0123456789abcdef0123456789abcdef"), 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	opts := fmt.Sprintf("--listen 0.0.0.0:%d --token-file %s", port, token)
	args := expand(words, map[string]string{"TORCHMEM_SERVE_OPTS": opts})
	if args[0] != "/usr/bin/torchmem" {
		t.Fatalf("ExecStart runs %s", args[0])
	}
	for i, a := range args {
		if a == "--db" {
			args[i+1] = filepath.Join(dir, "torchmem.db")
		}
	}
	addr := runServe(t, bin, args[1:])
	if !strings.HasPrefix(addr, "[::]:") && !strings.HasPrefix(addr, "0.0.0.0:") {
		t.Fatalf("serve listens on %s, not on every address", addr)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	if code := get(t, url, ""); code != http.StatusUnauthorized {
		t.Errorf("GET /metrics without the token: %d, want 401", code)
	}
	if code := get(t, url, "0123456789abcdef0123456789abcdef"); code != http.StatusOK {
		t.Errorf("GET /metrics with the token: %d, want 200", code)
	}
}

var built struct {
	sync.Once
	bin string
	out []byte
	err error
}

// torchmem builds ../cmd/torchmem once for the package's tests.
func torchmem(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds torchmem; skipped in -short")
	}
	built.Do(func() {
		dir, err := os.MkdirTemp("", "torchmem-deploy-test-")
		if err != nil {
			built.err = err
			return
		}
		built.bin = filepath.Join(dir, "torchmem")
		cmd := exec.Command("go", "build", "-o", built.bin, "../cmd/torchmem")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		built.out, built.err = cmd.CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("go build: %v\n%s", built.err, built.out)
	}
	return built.bin
}

// TestMain removes the binary torchmem built.
func TestMain(m *testing.M) {
	code := m.Run()
	if built.bin != "" {
		os.RemoveAll(filepath.Dir(built.bin))
	}
	os.Exit(code)
}

// runServe starts serve and returns the address it prints.
func runServe(t *testing.T, bin string, args []string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := serving.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
		close(found)
	}()
	select {
	case addr, ok := <-found:
		if !ok {
			t.Fatalf("torchmem %s exited without serving", strings.Join(args, " "))
		}
		return addr
	case <-time.After(30 * time.Second):
		t.Fatalf("torchmem %s: no \"serving\" line in 30 s", strings.Join(args, " "))
	}
	return ""
}

func get(t *testing.T, url, token string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
