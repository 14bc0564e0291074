package web

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/gpu"
	"github.com/torchmem/torchmem/internal/sample"
	"github.com/torchmem/torchmem/internal/sample/sampletest"
	"github.com/torchmem/torchmem/internal/store"
)

func p64(v int64) *int64 { return &v }

// fixture is a running Server over a fixture node: a real captured job
// of 1+4 processes whose main is a child of this test process (so the
// running run below, supervised by this process, owns it), two fake
// H200s, and a store with one running and one finished run.
type fixture struct {
	srv     *Server
	url     string
	dbPath  string
	running string // id of the running run
	done    string // id of the finished run
	client  *http.Client
}

type fixtureOpts struct {
	token         string
	metricsNoAuth bool
	samples       int // samples of the running run (1 Hz)
	// webConfig is a --web.config.file; with TLS in it, roots must hold
	// the server's certificate.
	webConfig string
	roots     *x509.CertPool
	cluster   ClusterSource // the /cluster page's source (nil: none)
}

func newFixture(t testing.TB, o fixtureOpts) *fixture {
	t.Helper()
	dir := t.TempDir()
	tree, err := sampletest.WriteJobTree(dir, 4)
	if err != nil {
		t.Fatal(err)
	}
	reparent(t, filepath.Join(tree.ProcRoot, strconv.Itoa(sampletest.MainPID), "status"), os.Getpid())
	devs := []gpu.Device{
		{Index: 0, UUID: "GPU-0", Name: "NVIDIA H200", TotalBytes: 150754820096, UsedBytes: 40 << 30, FreeBytes: 150754820096 - 40<<30, ReservedBytes: p64(584056832), NUMANode: 0},
		{Index: 1, UUID: "GPU-1", Name: "NVIDIA H200", TotalBytes: 150754820096, UsedBytes: 1 << 30, FreeBytes: 150754820096 - 1<<30, ReservedBytes: p64(584056832), NUMANode: 1},
	}
	procs := []gpu.Process{{GPUIndex: 0, GPUUUID: "GPU-0", PID: sampletest.MainPID, HostPID: sampletest.MainPID, UsedBytes: p64(38 << 30)}}
	smp, err := sample.New(sample.Options{ProcRoot: tree.ProcRoot, SysRoot: tree.SysRoot,
		GPU: gpu.NewFake(gpu.Info{Backend: "fake", DriverVersion: "580.159.04"}, devs, procs)})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{dbPath: filepath.Join(dir, "torchmem.db")}
	if o.samples == 0 {
		o.samples = 600
	}
	f.running, f.done = writeStore(t, f.dbPath, o.samples)
	f.srv, err = New(Config{Sampler: smp, Interval: 200 * time.Millisecond, DBPath: f.dbPath, Token: o.token,
		MetricsNoAuth: o.metricsNoAuth, WebConfigFile: o.webConfig, Version: "test", NoRuntimeMetrics: true, Logf: t.Logf, Cluster: o.cluster})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.url = "http://" + ln.Addr().String()
	f.client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if o.roots != nil {
		f.url = "https://" + ln.Addr().String()
		f.client.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: o.roots}}
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go f.srv.Run(ctx)
	go func() { _ = f.srv.Serve(ctx, ln); close(served) }()
	t.Cleanup(func() { cancel(); <-served })
	f.waitSample(t)
	return f
}

// reparent rewrites the PPid line of a fixture status file.
func reparent(t testing.TB, path string, ppid int) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = regexp.MustCompile(`(?m)^PPid:\t\d+$`).ReplaceAll(b, []byte("PPid:\t"+strconv.Itoa(ppid)))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) waitSample(t testing.TB) {
	for i := 0; i < 100; i++ {
		f.srv.mu.RLock()
		n := f.srv.node
		f.srv.mu.RUnlock()
		if n != nil && n.Sample != nil && len(n.Runs) > 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no sample with runs after 2 s")
}

var fixtureStart = time.Now().Add(-2 * time.Hour).Truncate(time.Second)

// writeStore records a finished run (OOM-killed, with a post-mortem) and a
// running run of n samples at 1 Hz supervised by this process.
func writeStore(t testing.TB, path string, n int) (running, done string) {
	t.Helper()
	db, err := store.Open(path, store.Options{Tiers: []store.Tier{}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	old := &store.Run{Command: []string{"python3", "finetune.py", "--bs", "64"}, Cwd: "/srv", Start: fixtureStart.Add(-time.Hour)}
	if err := db.CreateRun(old); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 60; i++ {
		_ = db.AppendSample(old.ID, store.Sample{Time: old.Start.Add(time.Duration(i) * time.Second), CgroupUsage: p64(int64(i) << 26)})
	}
	_ = db.AppendEvent(old.ID, store.Event{Time: old.Start.Add(59 * time.Second), Kind: "oom_kill", Source: "cgroup", PID: 4242, Message: "kernel OOM killer killed python3 (pid 4242) in the job's cgroup"})
	code := 137
	sum, _ := json.Marshal(map[string]any{"cause": "cgroup-oom", "verdict": "the job hit its 4.00 GiB memory limit", "recommendations": []string{"raise --memory-max"}})
	if err := db.FinishRun(old.ID, store.Finish{End: old.Start.Add(time.Minute), Status: store.StatusOOMKilled, ExitCode: &code,
		Peaks: map[string]int64{"cgroup_usage": 59 << 26}, Summary: sum}); err != nil {
		t.Fatal(err)
	}
	run := &store.Run{Command: []string{"python3", "train_dataloader.py"}, Cwd: "/srv", Start: fixtureStart, Labels: map[string]string{"SLURM_JOB_ID": "4711"}}
	if err := db.CreateRun(run); err != nil {
		t.Fatal(err)
	}
	appendRunning(t, db, run.ID, fixtureStart, n)
	return run.ID, old.ID
}

func appendRunning(t testing.TB, db *store.DB, id string, start time.Time, n int) {
	for i := 0; i < n; i++ {
		ts := start.Add(time.Duration(i) * time.Second)
		g := int64(30<<30) + int64(i%100)<<24
		s := store.Sample{Time: ts, CgroupUsage: p64(500<<20 + int64(i)<<10), HostAvailable: p64(100 << 30), RSSTotal: p64(900 << 20),
			PSSTotal: p64(300 << 20), SwapTotal: p64(0), AllocAllocated: p64(g - 4<<30), AllocReserved: p64(g), Step: p64(int64(i / 2)),
			GPUUsed: []*int64{p64(g + 2<<30), p64(1 << 30)}, GPUJobUsed: []*int64{p64(g + 1<<30), nil},
			Extra: map[string]float64{"alloc_retries": float64(i / 100)}}
		if err := db.AppendSample(id, s); err != nil {
			t.Fatal(err)
		}
	}
	_ = db.AppendEvent(id, store.Event{Time: start.Add(30 * time.Second), Kind: "cuda_oom", Source: "hook", PID: sampletest.MainPID, Message: "CUDA out of memory on device 0"})
	_ = db.AppendEvent(id, store.Event{Time: start.Add(40 * time.Second), Kind: "cleanup", Source: "policy", Message: "empty_cache() at 92% of GPU 0"})
	_ = db.UpdatePeaks(id, map[string]int64{"alloc_peak_allocated": 33 << 30, "alloc_peak_reserved": 35 << 30, "cgroup_usage": 600 << 20, "gpu0_used": 37 << 30, "gpu0_job_used": 36 << 30, "gpu1_used": 1 << 30})
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
}

// get fetches path with an optional bearer token.
func (f *fixture) get(t testing.TB, path, token string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", f.url+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func (f *fixture) getJSON(t testing.TB, path string, v any) {
	t.Helper()
	resp := f.get(t, path, "")
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d", path, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}
