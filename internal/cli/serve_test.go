package cli

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/torchmem/torchmem/internal/sample/sampletest"
	"github.com/torchmem/torchmem/internal/tui"
)

func TestServeRefusesOpenAddressWithoutToken(t *testing.T) {
	_, errOut, code := runCLI(t, "serve", "--listen", "0.0.0.0:0", "--db", filepath.Join(t.TempDir(), "none.db"))
	if code != 2 || !strings.Contains(errOut, "--token-file") {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	_, errOut, code = runCLI(t, "serve", "--interval", "10ms")
	if code != 1 || !strings.Contains(errOut, "--interval") {
		t.Fatalf("bad interval: code %d, stderr %q", code, errOut)
	}
}

// TestServeEndToEnd runs `torchmem serve` over a fixture job with an open
// address, --insecure and a fake GPU, and reads its API and metrics.
func TestServeEndToEnd(t *testing.T) {
	dir := t.TempDir()
	tree, err := sampletest.WriteJobTree(dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	fake := filepath.Join(dir, "gpu.json")
	os.WriteFile(fake, []byte(`{"info":{"backend":"fake"},"devices":[{"index":0,"uuid":"GPU-0","name":"NVIDIA H200","total_bytes":150754820096,"used_bytes":4294967296,"free_bytes":146459852800,"numa_node":-1}],"processes":[]}`), 0o644)
	var errb tui.SyncBuffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &errb, ProcRoot: tree.ProcRoot, SysRoot: tree.SysRoot, Root: dir}
	root := NewRoot(env)
	root.SetArgs([]string{"serve", "--listen", "0.0.0.0:0", "--insecure", "--gpu-fake", fake, "--interval", "200ms", "--db", filepath.Join(dir, "none.db")})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	addr := regexp.MustCompile(`serving http://([^/]+)/`)
	var base string
	for i := 0; i < 100 && base == ""; i++ {
		if m := addr.FindStringSubmatch(errb.String()); m != nil {
			base = "http://" + strings.Replace(m[1], "[::]", "127.0.0.1", 1)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if base == "" || !strings.Contains(errb.String(), "warning: serving 0.0.0.0:0 without a token") {
		t.Fatalf("stderr: %q", errb.String())
	}
	var node struct {
		Sample struct {
			Jobs []struct{ ID string } `json:"jobs"`
		} `json:"sample"`
	}
	for i := 0; i < 50 && len(node.Sample.Jobs) == 0; i++ {
		if resp, err := http.Get(base + "/api/v1/node"); err == nil {
			json.NewDecoder(resp.Body).Decode(&node)
			resp.Body.Close()
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(node.Sample.Jobs) != 1 || node.Sample.Jobs[0].ID != "pid:2000" {
		t.Fatalf("node: %+v", node)
	}
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `torchmem_gpu_memory_used_bytes{UUID="GPU-0",gpu="0"} 4.294967296e+09`) || !strings.Contains(string(b), "go_goroutines") {
		t.Errorf("metrics:\n%s", b)
	}
}

// TestServeDeployFlags: every flag the shipped systemd unit and DaemonSet
// pass to serve exists.
func TestServeDeployFlags(t *testing.T) {
	cmd := newServeCmd(DefaultEnv())
	check := func(where string, args []string) {
		for _, a := range args {
			name, ok := strings.CutPrefix(a, "--")
			if !ok {
				continue
			}
			name, _, _ = strings.Cut(name, "=")
			if cmd.Flags().Lookup(name) == nil {
				t.Errorf("%s passes --%s, which serve does not have", where, name)
			}
		}
	}
	unit, err := os.ReadFile("../../deploy/systemd/torchmem.service")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^ExecStart=\S+ serve (.*)$`).FindSubmatch(unit)
	if m == nil {
		t.Fatal("no ExecStart=... serve in the unit")
	}
	check("torchmem.service", strings.Fields(string(m[1])))
	b, err := os.ReadFile("../../deploy/kubernetes/daemonset.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var ds struct {
		Spec struct {
			Template struct {
				Spec struct {
					HostPID    bool `yaml:"hostPID"`
					Containers []struct {
						Args         []string
						VolumeMounts []struct {
							MountPath string `yaml:"mountPath"`
							ReadOnly  bool   `yaml:"readOnly"`
						} `yaml:"volumeMounts"`
						Env []struct{ Name, Value string }
					}
				}
			}
		}
	}
	if err := yaml.Unmarshal(b, &ds); err != nil {
		t.Fatal(err)
	}
	pod := ds.Spec.Template.Spec
	if !pod.HostPID || len(pod.Containers) != 1 || pod.Containers[0].Args[0] != "serve" {
		t.Fatalf("daemonset pod: %+v", pod)
	}
	c := pod.Containers[0]
	check("daemonset.yaml", c.Args)
	ro := map[string]bool{}
	for _, v := range c.VolumeMounts {
		ro[v.MountPath] = v.ReadOnly
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	if !ro["/host/proc"] || !ro["/host/sys"] || env["TORCHMEM_PROC_ROOT"] != "/host/proc" || env["TORCHMEM_SYS_ROOT"] != "/host/sys" || env["NVIDIA_VISIBLE_DEVICES"] == "" {
		t.Errorf("daemonset: mounts %v, env %v", ro, env)
	}
}

// TestServeRealRun: a real `torchmem run` of a real PyTorch job (CPU torch,
// hooked, two DataLoader workers) and a real `torchmem serve` over the same
// history store: serve finds the run, ties it to the sampled job through
// the supervisor's PID, and shows the hook's step in the API and metrics.
func TestServeRealRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds torchmem and runs a real job")
	}
	py := runTorchPython()
	if py == "" {
		t.Skip("no python3 with torch (Debian: apt install python3-torch)")
	}
	dir := t.TempDir()
	bin := runBuild(t, dir)
	db := filepath.Join(dir, "h.db")
	run := exec.Command(bin, "run", "--db", db, "--", py, "testdata/top/train_dataloader.py", "2", "60")
	run.Stdout, run.Stderr = io.Discard, io.Discard
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = run.Process.Signal(os.Interrupt); _ = run.Wait() }()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	serve := exec.Command(bin, "serve", "--listen", addr, "--db", db, "--interval", "500ms")
	serve.Stdout, serve.Stderr = io.Discard, io.Discard
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = serve.Process.Kill(); _ = serve.Wait() }()
	type liveRun struct {
		ID   string `json:"id"`
		Job  string `json:"job"`
		Step *int64 `json:"step"`
	}
	var last []liveRun
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		var node struct{ Runs []liveRun }
		if resp, err := http.Get("http://" + addr + "/api/v1/node"); err == nil {
			json.NewDecoder(resp.Body).Decode(&node)
			resp.Body.Close()
		}
		last = node.Runs
		if len(last) == 1 && last[0].Job != "" && last[0].Step != nil && *last[0].Step > 0 {
			break
		}
	}
	if len(last) != 1 || last[0].Job == "" || last[0].Step == nil {
		t.Fatalf("serve never showed the running run with its job and step: %+v", last)
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	// job_id is the job's stable key: here its root pid and start time.
	want := regexp.MustCompile(`torchmem_job_step\{job_id="` + regexp.QuoteMeta(last[0].Job) + `@[0-9]+",run="` + last[0].ID + `"\}`)
	if !want.Match(b) {
		t.Errorf("/metrics lacks %s", want)
	}
}

// TestServeTokenAndBasicAuthRefused: a bearer token and basic_auth_users
// cannot both guard serve (one Authorization header), so it says so.
func TestServeTokenAndBasicAuthRefused(t *testing.T) {
	dir := t.TempDir()
	tok := filepath.Join(dir, "token")
	os.WriteFile(tok, []byte("s3cret-token-0123456789\n"), 0o600)
	cfg := filepath.Join(dir, "web.yml")
	// bcrypt of "x"; no TLS needed to reach the check.
	os.WriteFile(cfg, []byte("basic_auth_users:\n  u: $2a$04$4vTLJ5BAzvJ6OqpViwEu8ud8n4NcY7VdyCXo2HzUrqV6DBnJX5C4C\n"), 0o600)
	_, errOut, code := runCLI(t, "serve", "--listen", "127.0.0.1:0", "--token-file", tok, "--web.config.file", cfg, "--db", filepath.Join(dir, "none.db"))
	if code != 2 || !strings.Contains(errOut, "use one of them") {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	_, errOut, code = runCLI(t, "serve", "--web.config.file", filepath.Join(dir, "absent.yml"))
	if code == 0 || !strings.Contains(errOut, "--web.config.file") {
		t.Fatalf("absent web config: code %d, stderr %q", code, errOut)
	}
}
