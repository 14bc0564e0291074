package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/procfs"
	"github.com/torchmem/torchmem/internal/sample"
	"github.com/torchmem/torchmem/internal/sample/sampletest"
)

var topUpdate = flag.Bool("update-top", false, "rewrite testdata/top golden files")

// topFixtureEnv writes a fixture job (main + 4 workers, real captures) and
// a recorded GPU, and returns an Env pointing at them.
func topFixtureEnv(t *testing.T) (*Env, *bytes.Buffer, *bytes.Buffer, string, string) {
	t.Helper()
	dir := t.TempDir()
	tree, err := sampletest.WriteJobTree(dir, 4)
	if err != nil {
		t.Fatal(err)
	}
	fake := filepath.Join(dir, "gpu.json")
	g := fmt.Sprintf(`{"info":{"backend":"fake","driver_version":"580.159.04","cuda_driver_version":"13.0"},
"devices":[{"index":0,"uuid":"GPU-2b0a","name":"NVIDIA H200","total_bytes":150754820096,"used_bytes":4800000000,"free_bytes":145954820096,"reserved_bytes":500000000,"numa_node":-1}],
"processes":[{"gpu_index":0,"gpu_uuid":"GPU-2b0a","pid":%d,"host_pid":%d,"used_bytes":4294967296}]}`, sampletest.MainPID, sampletest.MainPID)
	if err := os.WriteFile(fake, []byte(g), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, ProcRoot: tree.ProcRoot, SysRoot: tree.SysRoot, Root: dir}
	return env, &out, &errb, fake, dir
}

var (
	topTimeRE = regexp.MustCompile(`"time": "[^"]*"`)
	topSecsRE = regexp.MustCompile(`"(fast_seconds|pss_seconds)": [0-9.e-]+`)
	topClock  = regexp.MustCompile(`torchmem top  \d\d:\d\d:\d\d`)
)

// topNormalize removes what changes between runs: the clock, the cost of
// the tiers, and the temporary directory.
func topNormalize(s, dir string) string {
	s = strings.ReplaceAll(s, dir, "$ROOT")
	s = topTimeRE.ReplaceAllString(s, `"time": "$$TIME"`)
	s = topSecsRE.ReplaceAllString(s, `"$1": 0`)
	return topClock.ReplaceAllString(s, "torchmem top  HH:MM:SS")
}

func topGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "top", name)
	if *topUpdate {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update-top to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from golden (run with -update-top if intended):\n%s", name, got)
	}
}

func TestTopGoldenJSONAndTable(t *testing.T) {
	env, out, errb, fake, dir := topFixtureEnv(t)
	if code := Run(env, []string{"top", "--json", "--gpu-fake", fake}); code != 0 {
		t.Fatalf("top --json: exit %d: %s", code, errb)
	}
	var smp sample.Sample
	if err := json.Unmarshal(out.Bytes(), &smp); err != nil || smp.Schema != sample.SchemaVersion || len(smp.Jobs) != 1 {
		t.Fatalf("--json output: %v, %d jobs", err, len(smp.Jobs))
	}
	topGolden(t, "fixture.json", topNormalize(out.String(), dir))
	out.Reset()
	if code := Run(env, []string{"top", "--once", "--gpu-fake", fake, "--width", "80"}); code != 0 {
		t.Fatalf("top --once: exit %d: %s", code, errb)
	}
	for _, l := range strings.Split(out.String(), "\n") {
		if len([]rune(l)) > 80 {
			t.Errorf("line wider than 80: %q", l)
		}
	}
	topGolden(t, "fixture.txt", topNormalize(out.String(), dir))
}

func TestTopNoGPUAndBadFlags(t *testing.T) {
	env, out, errb, _, _ := topFixtureEnv(t)
	// The fixture sys tree has no PCI devices: one notice, the rest works.
	if code := Run(env, []string{"top", "--once"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	if !strings.Contains(out.String(), "! no NVIDIA GPU") || !strings.Contains(out.String(), "JOB 2000") {
		t.Errorf("no-GPU view:\n%s", out)
	}
	// Not a terminal: plain `top` prints the table once instead of the live view.
	out.Reset()
	if code := Run(env, []string{"top", "--filter", "train"}); code != 0 || !strings.Contains(out.String(), "JOB 2000") || strings.Contains(out.String(), "\x1b") {
		t.Errorf("top into a pipe: exit %d:\n%q", code, out)
	}
	for _, args := range [][]string{{"top", "--sort", "cpu"}, {"top", "--interval", "1ms"}, {"top", "extra"},
		{"top", "--pid", "999999,999998"}, {"top", "--cgroup", "/no/such/group"}} {
		errb.Reset()
		if code := Run(env, args); code != 1 || errb.Len() == 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errb)
		}
	}
}

// --json prints the jobs the table shows: --filter applies to it too.
func TestTopJSONHonoursFilter(t *testing.T) {
	env, out, errb, fake, _ := topFixtureEnv(t)
	for filter, want := range map[string]int{"train": 1, "no-such-job": 0} {
		out.Reset()
		if code := Run(env, []string{"top", "--json", "--gpu-fake", fake, "--filter", filter}); code != 0 {
			t.Fatalf("exit %d: %s", code, errb)
		}
		var smp sample.Sample
		if err := json.Unmarshal(out.Bytes(), &smp); err != nil || smp.Jobs == nil || len(smp.Jobs) != want {
			t.Errorf("--filter %s: %v, jobs %v, want %d", filter, err, smp.Jobs, want)
		}
	}
}

// TestTopRealTorchJob runs a real training process with a 4-worker
// DataLoader and checks what `top --json` says about it against /proc.
func TestTopRealTorchJob(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs a real PyTorch job with DataLoader workers; make test runs it")
	}
	py := runTorchPython()
	if py == "" {
		t.Skip("no Python with torch (apt-get install python3-torch, or set TORCHMEM_TEST_PYTHON)")
	}
	if _, err := os.Stat("/proc/self/smaps_rollup"); err != nil {
		t.Skip("no /proc/<pid>/smaps_rollup on this kernel")
	}
	script, _ := filepath.Abs(filepath.Join("testdata", "top", "train_dataloader.py"))
	cmd := exec.Command(py, script, "4", "0")
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	topWaitReady(t, stdout)
	main := cmd.Process.Pid
	topWaitSteady(t, main)

	// A live job's PSS moves a little between top's read and ours (pages
	// shared with workers get touched); a mismatch is retried, so only one
	// that persists over three fresh reads fails.
	// /proc is read just before and just after top's own read: top must
	// lie within what /proc said around it (CI once saw the main
	// process's PSS fall 139 → 126 MB over three reads while its workers
	// started touching shared pages, top's figure between /proc's).
	var bad []string
	pids := topJobPIDs(topJobOnce(t, main))
	for attempt := 1; attempt <= 3; attempt++ {
		before := topProcValues(t, pids)
		job := topJobOnce(t, main)
		after := topProcValues(t, pids)
		if len(job.Processes) != 5 || job.Totals.Workers != 4 {
			t.Fatalf("job has %d processes, %d workers; want 5 and 4", len(job.Processes), job.Totals.Workers)
		}
		if !job.Totals.PSSComplete || job.Totals.PSSBytes > job.Totals.RSSBytes {
			t.Errorf("PSS sum %d, RSS sum %d (complete %v)", job.Totals.PSSBytes, job.Totals.RSSBytes, job.Totals.PSSComplete)
		}
		if bad = topCompareWithProc(t, job, before, after); len(bad) == 0 {
			return
		}
		t.Logf("attempt %d: %s", attempt, strings.Join(bad, "; "))
	}
	t.Errorf("top and /proc disagree by more than 1%%: %s", strings.Join(bad, "; "))
}

// topJobOnce runs `top --once --json` and returns the job rooted at main.
func topJobOnce(t *testing.T, main int) *sample.Job {
	t.Helper()
	var out, errb bytes.Buffer
	env := DefaultEnv()
	env.Stdout, env.Stderr, env.ProcRoot, env.SysRoot = &out, &errb, "/proc", "/sys"
	if code := Run(env, []string{"top", "--once", "--json"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var smp sample.Sample
	if err := json.Unmarshal(out.Bytes(), &smp); err != nil {
		t.Fatal(err)
	}
	for i := range smp.Jobs {
		if smp.Jobs[i].RootPID == main {
			return &smp.Jobs[i]
		}
	}
	t.Fatalf("no job rooted at %d among %d jobs", main, len(smp.Jobs))
	return nil
}

func topWaitReady(t *testing.T, r interface{ Read([]byte) (int, error) }) {
	t.Helper()
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "ready") {
				ready <- true
				return
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatal("training script exited before it was ready")
		}
	case <-time.After(120 * time.Second):
		t.Fatal("training script not ready after 120 s")
	}
}

// topWaitSteady waits until the main process's RSS stops moving: right
// after the first batches the training loop still allocates (autograd,
// optimizer state), and /proc is read again after top, for comparison.
func topWaitSteady(t *testing.T, pid int) {
	t.Helper()
	fs, err := procfs.NewFS("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var last uint64
	for i := 0; i < 60; i++ {
		st, err := fs.Status(pid)
		if err != nil {
			t.Fatal(err)
		}
		cur := *st.VmRSSBytes
		if last > 0 && math.Abs(float64(cur)-float64(last)) < 0.002*float64(last) {
			return
		}
		last = cur
		time.Sleep(500 * time.Millisecond)
	}
	t.Log("RSS still moving after 30 s; comparing anyway")
}

// topCompareWithProc reads every member's status and smaps_rollup again
// and returns each RSS or PSS figure more than 1% away from /proc's.
// procVals: what /proc says of one process (RSS, PSS).
type procVals struct{ rss, pss uint64 }

func topJobPIDs(job *sample.Job) []int {
	var pids []int
	for _, p := range job.Processes {
		pids = append(pids, p.PID)
	}
	return pids
}

func topProcValues(t *testing.T, pids []int) map[int]procVals {
	t.Helper()
	fs, err := procfs.NewFS("/proc")
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]procVals{}
	for _, pid := range pids {
		st, err := fs.Status(pid)
		if err != nil {
			t.Fatal(err)
		}
		r, err := fs.SmapsRollup(pid)
		if err != nil {
			t.Fatal(err)
		}
		out[pid] = procVals{*st.VmRSSBytes, r.PssBytes}
	}
	return out
}

// topCompareWithProc: top's RSS and PSS of each process within 1% of
// the range /proc gave just before and just after top read them.
func topCompareWithProc(t *testing.T, job *sample.Job, before, after map[int]procVals) []string {
	t.Helper()
	var bad []string
	near := func(what string, pid int, got *uint64, a, b uint64) {
		lo, hi := math.Min(float64(a), float64(b)), math.Max(float64(a), float64(b))
		if got == nil || float64(*got) < lo*0.99 || float64(*got) > hi*1.01 {
			bad = append(bad, fmt.Sprintf("pid %d %s: top says %v, /proc says %d before and %d after", pid, what, topDeref(got), a, b))
		}
	}
	for _, p := range job.Processes {
		b, okb := before[p.PID]
		a, oka := after[p.PID]
		if !okb || !oka {
			t.Fatalf("pid %d is not among the job's processes read before", p.PID)
		}
		near("RSS", p.PID, p.RSSBytes, b.rss, a.rss)
		near("PSS", p.PID, p.PSSBytes, b.pss, a.pss)
		if !p.Torch || p.PSSSource != "smaps_rollup" {
			t.Errorf("pid %d: torch %v, pss source %q", p.PID, p.Torch, p.PSSSource)
		}
	}
	return bad
}

func topDeref(p *uint64) string {
	if p == nil {
		return "nil"
	}
	return strconv.FormatUint(*p, 10)
}

// `top < /dev/null` on a terminal: no keys instead of bubbletea failing to
// poll /dev/null; a reader that is not a file (tests) is kept.
func TestTopKeysNeedATerminal(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if in := topKeys(null); in != nil {
		t.Errorf("/dev/null used for keys: %v", in)
	}
	r := strings.NewReader("q")
	if in := topKeys(r); in != r {
		t.Errorf("reader dropped: %v", in)
	}
}
