package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/oomexplain"
	"github.com/torchmem/torchmem/internal/tui"
)

// oomTestdata is the parsers' real captures, shared with their own tests.
const oomTestdata = "../oomexplain/testdata"

func oomRun(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := DefaultEnv()
	env.Lang = langEN // the tests read English whatever the locale (lang_test.go: --lang)
	env.Stdout, env.Stderr, env.Stdin = &out, &errb, strings.NewReader(stdin)
	code := Run(env, append([]string{"oom"}, args...))
	return out.String(), errb.String(), code
}

type oomJSON struct {
	Incidents []struct {
		Kind   string  `json:"kind"`
		Time   *string `json:"time"`
		PIDs   []int   `json:"pids"`
		Source string  `json:"source"`
		Kernel *struct {
			OOMMemcg string `json:"oom_memcg"`
			Memcg    *struct {
				LimitBytes int64 `json:"limit_bytes"`
			} `json:"memcg"`
			Victim *struct {
				PID  int    `json:"pid"`
				Comm string `json:"comm"`
			} `json:"victim"`
		} `json:"kernel"`
		CUDA *struct {
			RequestedBytes int64 `json:"requested_bytes"`
		} `json:"cuda"`
		Explanation struct {
			Verdict         string   `json:"verdict"`
			Recommendations []string `json:"recommendations"`
		} `json:"explanation"`
	} `json:"incidents"`
}

func decodeOom(t *testing.T, s string) oomJSON {
	t.Helper()
	var r oomJSON
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatalf("--json output: %v\n%s", err, s)
	}
	return r
}

func TestOomFilesJSON(t *testing.T) {
	kernel := filepath.Join(oomTestdata, "kernel/cgroup-v1-6.18.dmesg")
	cuda := filepath.Join(oomTestdata, "cuda/cuda-oom-other-process-holds-gpu.log")
	out, errs, code := oomRun(t, "", "--json", kernel, cuda)
	if code != 0 {
		t.Fatalf("code %d: %s", code, errs)
	}
	r := decodeOom(t, out)
	if len(r.Incidents) != 2 {
		t.Fatalf("%d incidents", len(r.Incidents))
	}
	k, c := r.Incidents[0], r.Incidents[1]
	if k.Kind != "kernel_oom_kill" || k.Kernel.Victim.PID != 19335 || k.Kernel.Memcg.LimitBytes != 104857600 || k.Explanation.Verdict != "cgroup_limit" {
		t.Errorf("kernel incident %+v", k)
	}
	if c.Kind != "cuda_oom" || c.CUDA.RequestedBytes != 60<<30 || c.Explanation.Verdict != "other_processes" {
		t.Errorf("cuda incident %+v", c)
	}
	out, _, _ = oomRun(t, "", "--json", "--pid", "19335", kernel, cuda)
	if r := decodeOom(t, out); len(r.Incidents) != 1 || r.Incidents[0].Kind != "kernel_oom_kill" {
		t.Errorf("--pid 19335: %+v", r.Incidents)
	}
}

func TestOomStdinAndText(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(oomTestdata, "kernel/local-v1-6.18.dmesg-T"))
	if err != nil {
		t.Fatal(err)
	}
	out, errs, code := oomRun(t, string(b), "-")
	if code != 0 {
		t.Fatalf("code %d: %s", code, errs)
	}
	for _, want := range []string{"[1] kernel OOM kill: python3 (pid 10051) in memory cgroup /tmoom-capture-10205",
		"2026-11-29 22:44:14", "· - line 1", "verdict  cgroup_limit", "usage 100.00 MiB of limit 100.00 MiB (100%)", "torchmem run --memory-max"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	// --since after the capture drops it; before keeps it.
	out, _, _ = oomRun(t, string(b), "--since", "2026-11-30", "--json", "-")
	if r := decodeOom(t, out); len(r.Incidents) != 0 {
		t.Errorf("--since later: %d incidents", len(r.Incidents))
	}
	out, _, _ = oomRun(t, string(b), "--since", "2026-11-29 22:00", "--json", "-")
	if r := decodeOom(t, out); len(r.Incidents) != 1 {
		t.Errorf("--since earlier: %d incidents", len(r.Incidents))
	}
	out, _, _ = oomRun(t, "nothing to see\n", "-")
	if !strings.Contains(out, "no out-of-memory incidents found in -") {
		t.Errorf("empty input: %q", out)
	}
}

func TestOomGzip(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(oomTestdata, "kernel/rhel8-4.18-memcg-memsw.dmesg"))
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(b)
	zw.Close()
	gz := filepath.Join(t.TempDir(), "messages-20261122.gz")
	if err := os.WriteFile(gz, z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := oomRun(t, "", "--json", gz)
	if r := decodeOom(t, out); code != 0 || len(r.Incidents) != 1 || r.Incidents[0].Kernel.Victim.PID != 7093 {
		t.Fatalf("gzip file: code %d %s %+v", code, errs, r.Incidents)
	}
	out, _, _ = oomRun(t, z.String(), "--json", "-")
	if r := decodeOom(t, out); len(r.Incidents) != 1 {
		t.Errorf("gzip on stdin: %d incidents", len(r.Incidents))
	}
}

func TestOomErrors(t *testing.T) {
	out, errs, code := oomRun(t, "", "/nonexistent/dmesg.txt")
	// One error naming the file once; no "none found in" for a file never read.
	if code != 1 || strings.Count(errs, "/nonexistent/dmesg.txt") != 1 || out != "" {
		t.Errorf("missing file: code %d stdout %q stderr %q", code, out, errs)
	}
	dir := t.TempDir()
	out, errs, code = oomRun(t, "", dir)
	if code != 1 || strings.Count(errs, dir) != 1 || !strings.Contains(errs, "is a directory") || out != "" {
		t.Errorf("directory: code %d stdout %q stderr %q", code, out, errs)
	}
	_, errs, code = oomRun(t, "", "--since", "yesterday-ish", "-")
	if code != 1 || !strings.Contains(errs, "--since") {
		t.Errorf("bad --since: code %d stderr %q", code, errs)
	}
	_, errs, code = oomRun(t, "", "--follow", "x.log")
	if code != 1 || !strings.Contains(errs, "--follow") {
		t.Errorf("--follow with a file: code %d stderr %q", code, errs)
	}
}

// A real kernel OOM kill: a v1 memory cgroup limited to 100 MB, a python
// allocating 300 MB in it; then `torchmem oom --json --pid N` must find it
// in this boot's kernel log with the victim, the limit and the cgroup.
func TestOomRealCgroupKill(t *testing.T) {
	// Only this kill: pids wrap, and an earlier run's kill of another
	// process with the same pid is in this boot's log too. The kernel's
	// timestamps are monotonic, turned into wall time: allow a little.
	since := time.Now().Add(-5 * time.Second).Format(time.RFC3339)
	pid, name := oomKillInCgroup(t)
	var r oomJSON
	for try := 0; try < 20; try++ { // the report may land a moment after the kill
		out, errs, code := oomRun(t, "", "--json", "--pid", fmt.Sprint(pid), "--since", since)
		if code != 0 {
			t.Fatalf("code %d: %s", code, errs)
		}
		if r = decodeOom(t, out); len(r.Incidents) > 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(r.Incidents) != 1 {
		t.Fatalf("%d incidents for pid %d", len(r.Incidents), pid)
	}
	k := r.Incidents[0].Kernel
	if k == nil || k.Victim == nil || k.Victim.PID != pid || k.Victim.Comm != "python3" {
		t.Fatalf("victim %+v, want pid %d", k, pid)
	}
	if k.Memcg == nil || k.Memcg.LimitBytes != 104857600 || k.OOMMemcg != "/"+name {
		t.Errorf("memcg %q limit %+v", k.OOMMemcg, k.Memcg)
	}
	if r.Incidents[0].Time == nil || r.Incidents[0].Explanation.Verdict != "cgroup_limit" {
		t.Errorf("time %v verdict %s", r.Incidents[0].Time, r.Incidents[0].Explanation.Verdict)
	}
}

// oomKillInCgroup runs a 300 MB allocation in a fresh 100 MB v1 memory
// cgroup and returns the killed pid and the cgroup's name.
func oomKillInCgroup(t *testing.T) (int, string) {
	t.Helper()
	const root = "/sys/fs/cgroup/memory"
	if os.Geteuid() != 0 {
		t.Skip("needs root to create a memory cgroup and read /dev/kmsg")
	}
	if _, err := os.Stat(filepath.Join(root, "memory.limit_in_bytes")); err != nil {
		t.Skip("no cgroup v1 memory controller at " + root)
	}
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Skip("no " + py)
	}
	name := fmt.Sprintf("torchmem-oomtest-%d-%d", os.Getpid(), time.Now().UnixNano()%1e9)
	cg := filepath.Join(root, name)
	if err := os.Mkdir(cg, 0o755); err != nil {
		t.Skipf("create cgroup: %v", err)
	}
	t.Cleanup(func() { os.Remove(cg) })
	if err := os.WriteFile(filepath.Join(cg, "memory.limit_in_bytes"), []byte("104857600"), 0o644); err != nil {
		t.Fatalf("set limit: %v", err)
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	script := fmt.Sprintf(`echo $$ > %s/cgroup.procs && echo $$ > %s && exec %s -c 'b=bytearray(300<<20)'`, cg, pidFile, py)
	if err := exec.Command("sh", "-c", script).Run(); err == nil {
		t.Fatal("the 300 MB allocation survived a 100 MB limit")
	}
	b, _ := os.ReadFile(pidFile)
	var pid int
	if _, err := fmt.Sscan(string(b), &pid); err != nil {
		t.Fatalf("pid file %q: %v", b, err)
	}
	return pid, name
}

// --follow reports a kill that happens while it watches.
func TestOomFollowRealKill(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out := &tui.SyncBuffer{}
	env := DefaultEnv()
	env.Stdout, env.Stderr = out, io.Discard
	done := make(chan error, 1)
	go func() { done <- runOom(ctx, env, &oomFlags{follow: true, json: true}, nil) }()
	time.Sleep(300 * time.Millisecond) // let it reach the end of the log
	pid, name := oomKillInCgroup(t)
	want := fmt.Sprintf(`"victim":{"pid":%d`, pid)
	for !strings.Contains(out.String(), want) && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("follow: %v", err)
	}
	got := out.String()
	if !strings.Contains(got, want) || !strings.Contains(got, `"oom_memcg":"/`+name+`"`) {
		t.Fatalf("follow output lacks pid %d / cgroup %s:\n%.2000s", pid, name, got)
	}
}

// No readable kernel log: the error says what to do, and stays ErrNotPresent.
func TestOomKernelHint(t *testing.T) {
	err := oomKernelHint(fmt.Errorf("%w: open /dev/kmsg: operation not permitted", oomexplain.ErrNoKernelLog))
	if !errors.Is(err, oomexplain.ErrNoKernelLog) || !strings.Contains(err.Error(), "run as root") {
		t.Errorf("err = %v", err)
	}
	if other := errors.New("x"); oomKernelHint(other) != other {
		t.Error("other errors must pass unchanged")
	}
}

// TestOomRedirectedStdin: `torchmem oom < FILE` and a pipe read the data
// given, not this host's kernel log; /dev/null (a script without
// input) does not count as data. Facts of this host (its /dev/shm) are
// not shown for a log from elsewhere.
func TestOomRedirectedStdin(t *testing.T) {
	name := filepath.Join(oomTestdata, "host/dataloader-bus-error.log")
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out, errb bytes.Buffer
	env := DefaultEnv()
	env.Stdout, env.Stderr, env.Stdin = &out, &errb, f
	if code := Run(env, []string{"oom", "--json"}); code != 0 {
		t.Fatalf("code %d: %s", code, errb.String())
	}
	r := decodeOom(t, out.String())
	if len(r.Incidents) == 0 || r.Incidents[0].Source != "-" {
		t.Fatalf("redirected file not read: %s", out.String())
	}
	if strings.Contains(out.String(), "/dev/shm on this host") {
		t.Errorf("this host's /dev/shm shown for a log from elsewhere:\n%s", out.String())
	}
	if !strings.Contains(out.String(), `"truncated": false`) {
		t.Errorf("no truncated field:\n%s", out.String())
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if stdinIsData(null) {
		t.Error("/dev/null taken as data")
	}
}

// TestOomTruncatedNotice: past the cap, incidents are counted, said on
// stderr and marked in the JSON.
func TestOomTruncatedNotice(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 10005; i++ {
		fmt.Fprintf(&b, "RuntimeError: DataLoader worker (pid %d) is killed by signal: Killed.\n", 1000+i)
	}
	out, errs, code := oomRun(t, b.String(), "--json", "-")
	if code != 0 {
		t.Fatalf("code %d: %s", code, errs)
	}
	if !strings.Contains(errs, "5 more incidents were found but not kept") || !strings.Contains(out, `"truncated": true`) || !strings.Contains(out, `"dropped": 5`) {
		t.Errorf("stderr %q, json head %.200s", errs, out)
	}
}
