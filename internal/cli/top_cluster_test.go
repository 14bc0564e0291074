package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/torchmem/torchmem/internal/cluster"
	"github.com/torchmem/torchmem/internal/sample/sampletest"
)

// TestTopClusterPrometheus is the cluster view end to end: Debian's real
// Prometheus (behind basic auth, in its own --web.config.file) scrapes two
// real `torchmem serve` agents on loopback, node-a over this host's /proc
// with a real PyTorch process, node-b over the recorded job tree of
// sampletest. `torchmem top --prometheus` must list both nodes with their
// own jobs and GPUs, count the OOM kills node-b's kernel counters gain,
// and show node-b as down, with when it was last seen, once it stops.
func TestTopClusterPrometheus(t *testing.T) {
	if testing.Short() {
		t.Skip("builds torchmem and runs Prometheus and two agents")
	}
	prom, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("no prometheus on PATH (Debian: apt-get install prometheus): the cluster view needs a real one")
	}
	dir := t.TempDir()
	bin := runBuild(t, dir)
	// addrC is an agent that never came up: a target nothing listens on.
	addrA, addrB, addrC, addrP := clusterFreePort(t), clusterFreePort(t), clusterFreePort(t), clusterFreePort(t)

	// node-b: the recorded job (pid:2000) with kernel counters the test moves.
	tree, err := sampletest.WriteJobTree(filepath.Join(dir, "b"), 2)
	if err != nil {
		t.Fatal(err)
	}
	vmstat := filepath.Join(tree.ProcRoot, "vmstat")
	clusterWrite(t, vmstat, "nr_free_pages 1000\noom_kill 5\n")
	gpuA := clusterGPUFake(t, dir, "a", 1, "GPU-a0")
	gpuB := clusterGPUFake(t, dir, "b", 2, "GPU-b")
	clusterTorchJob(t)
	httpCfg := startClusterPrometheus(t, prom, dir, addrP, addrA, addrB, addrC)
	base := "http://" + addrP
	// node-a's agent also serves the dashboard's cluster page from Prometheus.
	startAgent(t, bin, nil, "serve", "--listen", addrA, "--node-name", "node-a", "--gpu-fake", gpuA, "--db", filepath.Join(dir, "a.db"), "--no-kernel-log",
		"--prometheus", base, "--http.config.file", httpCfg)
	agentB := startAgent(t, bin, []string{"TORCHMEM_PROC_ROOT=" + tree.ProcRoot, "TORCHMEM_SYS_ROOT=" + tree.SysRoot},
		"serve", "--listen", addrB, "--node-name", "node-b", "--gpu-fake", gpuB, "--db", filepath.Join(dir, "b.db"), "--no-kernel-log")

	// Both agents scraped, each with its own jobs and GPUs.
	// Prometheus also scrapes itself: a target of another scrape job is not a node.
	sum := waitCluster(t, bin, base, httpCfg, "both nodes up with their jobs", func(s *cluster.Summary) bool {
		a, b := clusterNode(s, "node-a"), clusterNode(s, "node-b")
		return a != nil && b != nil && a.Up && b.Up && clusterNode(s, addrC) != nil && clusterHasJob(a, torchJobMark) && clusterHasJob(b, fixtureJob) &&
			len(a.GPUs) == 1 && len(b.GPUs) == 2
	})
	// The agent that never answered is listed, down and never seen.
	if c := clusterNode(sum, addrC); len(sum.Nodes) != 3 || c == nil || c.Up || c.LastSeen != nil {
		t.Errorf("nodes: %+v", sum.Nodes)
	}
	if clusterHasJob(clusterNode(sum, "node-a"), fixtureJob) || clusterHasJob(clusterNode(sum, "node-b"), torchJobMark) {
		t.Errorf("a job shows on the wrong node: %+v", sum.Nodes)
	}
	if a := clusterNode(sum, "node-a"); a.Instance != addrA || a.GPUs[0].UUID != "GPU-a0" || a.Version == "" {
		t.Errorf("node-a: %+v", a)
	}
	var page cluster.Summary
	if err := clusterGetJSON("http://"+addrA+"/api/v1/cluster", &page); err != nil || clusterNode(&page, "node-a") == nil || clusterNode(&page, "node-b") == nil {
		t.Errorf("node-a's /api/v1/cluster: %v %+v", err, page)
	}

	// Two kernel OOM kills on node-b, one of them in the job's cgroup,
	// after Prometheus has ten seconds of the counters' old values (so
	// increase() extrapolates by well under half a kill).
	time.Sleep(10 * time.Second)
	clusterWrite(t, vmstat, "nr_free_pages 1000\noom_kill 7\n")
	oomControl := filepath.Join(tree.SysRoot, "fs/cgroup/memory", sampletest.CgroupPath, "memory.oom_control")
	b, err := os.ReadFile(oomControl)
	if err != nil {
		t.Fatal(err)
	}
	clusterWrite(t, oomControl, strings.Replace(string(b), "oom_kill 0", "oom_kill 1", 1))
	sum = waitCluster(t, bin, base, httpCfg, "node-b's OOM kills counted", func(s *cluster.Summary) bool {
		n := clusterNode(s, "node-b")
		return n != nil && n.OOMs.HostKills == 2 && len(n.Jobs) == 1 && n.OOMs.JobKills[n.Jobs[0].ID] == 1 && n.Jobs[0].OOMKills == 1
	})
	// node-a is this host: OOM kills other tests cause on it are real, so
	// only node-b's recorded counters are checked exactly.
	if n := clusterNode(sum, "node-b"); n.OOMs.Total() != 2 {
		t.Errorf("OOMs: node-b %+v", n.OOMs)
	}
	recordCluster(t, base, "up")
	out, errOut, code := runExec(bin, "top", "--prometheus", base, "--http.config.file", httpCfg, "--once", "--width", "160")
	t.Logf("torchmem top --prometheus URL --once (both up):\n%s", out)
	if code != 0 || !strings.Contains(out, "node-b: kernel OOM kills: 2; OOM kills in the cgroup of "+clusterNode(sum, "node-b").Jobs[0].ID+": 1") {
		t.Errorf("--once: exit %d, stderr %q", code, errOut)
	}

	// node-b stops: Prometheus's up goes to 0 and the view says so.
	_ = agentB.Process.Kill()
	_ = agentB.Wait()
	sum = waitCluster(t, bin, base, httpCfg, "node-b down", func(s *cluster.Summary) bool {
		n := clusterNode(s, "node-b")
		return n != nil && !n.Up && n.LastSeen != nil && len(n.Jobs) == 0
	})
	if a := clusterNode(sum, "node-a"); !a.Up || !clusterHasJob(a, torchJobMark) {
		t.Errorf("node-a after node-b stopped: %+v", a)
	}
	recordCluster(t, base, "down")
	out, _, code = runExec(bin, "top", "--prometheus", base, "--http.config.file", httpCfg, "--once", "--width", "160")
	t.Logf("torchmem top --prometheus URL --once (node-b down):\n%s", out)
	if code != 0 || !clusterLineHas(out, "node-b", "down, last seen") || !clusterLineHas(out, "node-a", "up") {
		t.Errorf("--once after node-b stopped: exit %d\n%s", code, out)
	}

	// Without the password: one line naming the URL, exit 1.
	_, errOut, code = runExec(bin, "top", "--prometheus", base, "--once")
	if code != 1 || !strings.Contains(errOut, "Prometheus at "+base) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("no credentials: exit %d, stderr %q", code, errOut)
	}
}

// TestTopClusterUnreachable: nothing listens at the URL; the error is one
// line that names it, and comes quickly.
func TestTopClusterUnreachable(t *testing.T) {
	addr := clusterFreePort(t) // closed again: nothing listens there
	_, errOut, code := runCLI(t, "top", "--prometheus", "http://"+addr, "--once")
	if code != 1 || !strings.Contains(errOut, "Prometheus at http://"+addr) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = runCLI(t, "top", "--prometheus", "localhost:9090", "--once")
	if code != 1 || !strings.Contains(errOut, `--prometheus "localhost:9090"`) {
		t.Fatalf("bad URL: exit %d, stderr %q", code, errOut)
	}
}

func clusterFreePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func clusterWrite(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// clusterGPUFake writes a recorded-format GPU file of n H200s.
func clusterGPUFake(t *testing.T, dir, name string, n int, uuid string) string {
	var devs []string
	for i := 0; i < n; i++ {
		devs = append(devs, fmt.Sprintf(`{"index":%d,"uuid":"%s%d","name":"NVIDIA H200","total_bytes":150754820096,"used_bytes":%d,"free_bytes":100000000000,"numa_node":-1}`,
			i, uuid, i, (i+1)<<32))
	}
	if n == 1 {
		devs[0] = strings.Replace(devs[0], uuid+"0", uuid, 1)
	}
	path := filepath.Join(dir, name+"-gpu.json")
	clusterWrite(t, path, `{"info":{"backend":"fake"},"devices":[`+strings.Join(devs, ",")+`],"processes":[]}`)
	return path
}

func startAgent(t *testing.T, bin string, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var log strings.Builder
	cmd.Stderr = &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("agent %v:\n%s", args, log.String())
		}
	})
	return cmd
}

// torchJobMark is in the command line of node-a's job, fixtureJob in
// node-b's: jobs are found by command, since their job_id is the
// workload's key (a pod, a Slurm job, a unit) where the test runs in one.
const (
	torchJobMark = "torchmem-cluster-test"
	fixtureJob   = "train_dataloader.py"
)

// clusterTorchJob starts a real PyTorch process (it imports torch, so
// node-a's agent finds libtorch in its maps).
func clusterTorchJob(t *testing.T) {
	t.Helper()
	py := runTorchPython()
	if py == "" {
		t.Skip("no python3 with torch (Debian: python3-torch): node-a needs a real PyTorch job")
	}
	// The mark comes first: job_info cuts the command line to 80 characters.
	cmd := exec.Command(py, "-c", "m = '"+torchJobMark+"'; import torch, time; x = torch.ones(1 << 20); time.sleep(600)")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
}

// startClusterPrometheus runs Prometheus scraping both agents every
// second, its API behind basic auth, and returns the HTTP client
// configuration file (promtool's format) holding the password.
func startClusterPrometheus(t *testing.T, bin, dir, addr string, targets ...string) string {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	webCfg, httpCfg, cfg := filepath.Join(dir, "web.yml"), filepath.Join(dir, "http.yml"), filepath.Join(dir, "prometheus.yml")
	clusterWrite(t, webCfg, fmt.Sprintf("basic_auth_users:\n  viewer: %s\n", hash))
	clusterWrite(t, httpCfg, "basic_auth:\n  username: viewer\n  password: s3cret\n")
	clusterWrite(t, cfg, fmt.Sprintf(`global: {scrape_interval: 1s, scrape_timeout: 900ms}
scrape_configs:
  - job_name: torchmem
    static_configs: [{targets: [%q, %q, %q]}]
  - job_name: prometheus
    basic_auth: {username: viewer, password: s3cret}
    static_configs: [{targets: [%q]}]
`, targets[0], targets[1], targets[2], addr))
	cmd := exec.Command(bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+addr, "--web.config.file="+webCfg, "--log.level=warn")
	log, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("prometheus log:\n%s", b)
		}
	})
	return httpCfg
}

// waitCluster runs `top --prometheus --json` until ok holds (90 s at most).
func waitCluster(t *testing.T, bin, base, httpCfg, what string, ok func(*cluster.Summary) bool) *cluster.Summary {
	t.Helper()
	var last string
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		start := time.Now()
		out, errOut, code := runExec(bin, "top", "--prometheus", base, "--http.config.file", httpCfg, "--json")
		took := time.Since(start)
		last = fmt.Sprintf("exit %d, stderr %q, stdout %s", code, errOut, out)
		var s cluster.Summary
		if code == 0 && json.Unmarshal([]byte(out), &s) == nil && ok(&s) {
			t.Logf("%s: torchmem top --prometheus --json took %s (process start included)", what, took.Round(time.Millisecond))
			return &s
		}
	}
	t.Fatalf("%s: gave up after 90 s; last: %s", what, last)
	return nil
}

func clusterNode(s *cluster.Summary, name string) *cluster.Node {
	for i := range s.Nodes {
		if s.Nodes[i].Name == name {
			return &s.Nodes[i]
		}
	}
	return nil
}

// clusterHasJob reports whether a job of n has command in its command line.
func clusterHasJob(n *cluster.Node, command string) bool {
	if n == nil {
		return false
	}
	for _, j := range n.Jobs {
		if strings.Contains(j.Command, command) {
			return true
		}
	}
	return false
}

// clusterLineHas reports whether a line of out starts with node and holds want.
func clusterLineHas(out, node, want string) bool {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, node+" ") && strings.Contains(l, want) {
			return true
		}
	}
	return false
}

// recordCluster saves Prometheus's raw answer to each cluster query under
// $TORCHMEM_RECORD_CLUSTER/<state>/ (how internal/cluster/testdata was
// recorded); it does nothing when the variable is unset.
func recordCluster(t *testing.T, base, state string) {
	t.Helper()
	root := os.Getenv("TORCHMEM_RECORD_CLUSTER")
	if root == "" {
		return
	}
	dir := filepath.Join(root, state)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	at := strconv.FormatInt(time.Now().Unix(), 10)
	for name, q := range cluster.Queries(cluster.DefaultWindow) {
		req, err := http.NewRequest("GET", base+"/api/v1/query?time="+at+"&query="+url.QueryEscape(q), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth("viewer", "s3cret")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		clusterWrite(t, filepath.Join(dir, name+".json"), string(b))
	}
	clusterWrite(t, filepath.Join(dir, "time"), at+"\n")
}

func clusterGetJSON(u string, v any) error {
	resp, err := http.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
