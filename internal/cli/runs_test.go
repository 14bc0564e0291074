package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/torchmem/torchmem/internal/runner"
	"github.com/torchmem/torchmem/internal/store"
	"github.com/torchmem/torchmem/internal/supervisor"
)

// runsFixtureDB records one finished OOM-killed run the way torchmem run does.
func runsFixtureDB(t *testing.T) (string, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "h.db")
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Add(-time.Minute)
	r := &store.Run{Command: []string{"python3", "train.py"}, Cwd: "/tmp", Start: t0,
		Labels: map[string]string{"workload": "slurm", "slurm_job_id": "4242", "slurm_step_id": "0", "slurm_user": "alice"}}
	if err := db.CreateRun(r); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		db.AppendSample(r.ID, store.Sample{Time: t0.Add(time.Duration(i) * time.Second), CgroupUsage: store.Int(int64(i) << 24)})
	}
	db.AppendEvent(r.ID, store.Event{Time: t0.Add(19 * time.Second), Kind: "cgroup_oom", Source: "cgroup", Message: "cgroup hit its memory limit: OOM"})
	limit, nine := int64(200<<20), 9
	sum := supervisor.Summary{ExitCode: 137, Signal: &nine, Cause: supervisor.CauseCgroupOOMKill, CgroupLimit: &limit,
		Verdict: "killed by the kernel OOM killer", Peaks: map[string]int64{"cgroup_usage": 19 << 24},
		Recommendations: []string{"raise --memory-max"}}
	fin := runner.FinishOf(&supervisor.Result{ExitCode: 137, Summary: sum})
	fin.End = t0.Add(20 * time.Second)
	if err := db.FinishRun(r.ID, fin); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path, r.ID
}

func TestRunsShowReport(t *testing.T) {
	db, id := runsFixtureDB(t)
	out, errOut, code := runCLI(t, "runs", "--db", db)
	if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "oom-killed") || !strings.Contains(out, "304M") {
		t.Fatalf("runs: %d %q %q", code, out, errOut)
	}
	out, _, code = runCLI(t, "runs", "--db", db, "--json")
	var list []store.Run
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 1 || list[0].Signal == nil || *list[0].Signal != 9 {
		t.Fatalf("runs --json: %d %q", code, out)
	}
	out, _, code = runCLI(t, "show", "--db", db, "last")
	for _, want := range []string{"oom-killed", "python3 train.py", "killed by the kernel OOM killer", "raise --memory-max", "cgroup hit its memory limit",
		"who      slurm 4242.0 (alice)"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("show lacks %q: %s", want, out)
		}
	}
	out, _, code = runCLI(t, "report", "--db", db, id, "--json")
	var d struct {
		Run     store.Run
		Samples []store.Sample
		Events  []store.Event
	}
	if code != 0 || json.Unmarshal([]byte(out), &d) != nil || len(d.Samples) != 20 || len(d.Events) != 1 {
		t.Fatalf("report --json: %d samples %d", code, len(d.Samples))
	}
	html := filepath.Join(t.TempDir(), "r.html")
	if _, e, code := runCLI(t, "report", "--db", db, id[:3], "--html", html); code != 0 {
		t.Fatalf("report --html: %d %s", code, e)
	}
	if b, _ := os.ReadFile(html); !strings.Contains(string(b), "uPlot") {
		t.Fatal("no chart code in the report")
	}
	if _, e, code := runCLI(t, "report", "--db", db, "nosuchrun", "--json"); code != 1 || !strings.Contains(e, "nosuchrun") {
		t.Fatalf("unknown run: %d %q", code, e)
	}
	if _, _, code := runCLI(t, "report", "--db", db, id); code != 1 {
		t.Fatal("report without --html or --json must fail")
	}
}

func TestRunFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--memory-max", "lots", "--", "true"},
		{"run", "--oom-score-adj", "5000", "--", "true"},
		{"run", "--numa", "banana", "--no-history", "--", "true"},
		{"run", "--gpu-threshold", "200%", "--", "true"},
		{"run", "--policy", "/nonexistent/policy.yaml", "--", "true"},
		{"run", "--memory-max", "1G"},
		{"run", "--memory-high", "1G", "--memory-max", "512M", "--", "true"},
	} {
		_, errOut, code := runCLI(t, args...)
		if len(args) == 3 && !strings.Contains(errOut, "no command to run") {
			t.Errorf("%v: %q does not say the command is missing", args, errOut)
		}
		if code != 1 || !strings.HasPrefix(errOut, "torchmem: ") || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("%v: code %d stderr %q", args, code, errOut)
		}
	}
}

// Reading a store that does not exist says where it looked and creates
// nothing there (it used to create an empty database and list no runs).
func TestRunsMissingStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "typo")
	path := filepath.Join(dir, "h.db")
	for _, args := range [][]string{{"runs"}, {"show", "last"}, {"report", "last", "--json"}} {
		_, errOut, code := runCLI(t, append(args, "--db", path)...)
		if code != 1 || !strings.Contains(errOut, "no run history at "+path) {
			t.Errorf("%v: code %d stderr %q", args, code, errOut)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("reading commands created %s: %v", dir, err)
	}
}

// The hint after a run names the store it was recorded in.
func TestRunDetailsHint(t *testing.T) {
	if h := runDetailsHint((&Env{}).tr(), "abc123", ""); strings.Contains(h, "--db") {
		t.Errorf("default store: %q", h)
	}
	h := runDetailsHint((&Env{}).tr(), "abc123", "/tmp/my runs/h.db")
	if !strings.Contains(h, "torchmem show abc123 --db '/tmp/my runs/h.db';") ||
		!strings.Contains(h, "torchmem report abc123 --db '/tmp/my runs/h.db' -o torchmem-abc123.html") {
		t.Errorf("custom store: %q", h)
	}
}

// A long command is cut between characters (it was cut inside a UTF-8
// sequence, printing an invalid byte).
func TestRunsCommandCut(t *testing.T) {
	got := runsCommand([]string{"python3", "train.py", "--name", strings.Repeat("é", 40)}, 30)
	if !utf8.ValidString(got) || utf8.RuneCountInString(got) != 30 || !strings.HasSuffix(got, "…") {
		t.Errorf("%q (%d characters)", got, utf8.RuneCountInString(got))
	}
	if got := runsCommand([]string{"python3", "t.py"}, 30); got != "python3 t.py" {
		t.Errorf("short command changed: %q", got)
	}
}

// show prints the recorded settings as the flags that give them.
func TestShowSettingsAsFlags(t *testing.T) {
	got := showSettings(json.RawMessage(`{"numa":"off","memory_max":"400M","interval":"1s","oom_score_adj":-500}`))
	if got != "--interval 1s --memory-max 400M --numa off --oom-score-adj -500" {
		t.Errorf("%q", got)
	}
	if got := showSettings(json.RawMessage(`"odd"`)); got != `"odd"` {
		t.Errorf("not an object: %q", got)
	}
}

// The default table fits 80 columns even with long (and multi-byte)
// command lines; --wide prints them whole; $COLUMNS widens the cut.
func TestRunsTableFits(t *testing.T) {
	t.Setenv("COLUMNS", "")
	path := filepath.Join(t.TempDir(), "h.db")
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	long := []string{"torchrun", "--nproc_per_node=8", "train.py", "--config", "configs/llama-70b-finetune-ünïcödé.yaml", strings.Repeat("--flag-é ", 30) + "--end"}
	t0 := time.Now().Add(-26 * time.Hour)
	for i, st := range []store.Status{store.StatusExited, store.StatusOOMKilled, store.StatusSupervisorLost} {
		r := &store.Run{Command: long, Cwd: "/tmp", Start: t0.Add(time.Duration(i) * time.Hour)}
		if err := db.CreateRun(r); err != nil {
			t.Fatal(err)
		}
		db.AppendSample(r.ID, store.Sample{Time: r.Start.Add(time.Second), CgroupUsage: store.Int(123 << 30),
			GPUUsed: []*int64{store.Int(79 << 30)}})
		code, sig := 0, 9
		fin := store.Finish{End: r.Start.Add(25*time.Hour + 3*time.Minute), Status: st, ExitCode: &code,
			Peaks: map[string]int64{"cgroup_usage": 123 << 30, "gpu0_used": 79 << 30}}
		if st != store.StatusExited {
			fin.ExitCode, fin.Signal = nil, &sig
		}
		if err := db.FinishRun(r.ID, fin); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	out, _, code := runCLI(t, "runs", "--db", path)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if code != 0 || len(lines) != 4 || !strings.Contains(out, "1d01h") || !strings.Contains(out, "sig 9") || !strings.Contains(out, "123G") {
		t.Fatalf("runs: %d\n%s", code, out)
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > 80 || !utf8.ValidString(l) {
			t.Errorf("%d characters: %q", n, l)
		}
		if l != lines[0] && !strings.HasSuffix(l, "…") {
			t.Errorf("long command not cut: %q", l)
		}
	}
	whole := shellJoin(long) // the argument with spaces quoted, as it was given
	if out, _, _ := runCLI(t, "runs", "--db", path, "--wide"); strings.Count(out, whole) != 3 {
		t.Errorf("--wide does not print the whole command:\n%s", out)
	}
	t.Setenv("COLUMNS", "120")
	out, _, _ = runCLI(t, "runs", "--db", path)
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n")[1:] {
		if n := utf8.RuneCountInString(l); n != 120 {
			t.Errorf("COLUMNS=120: %d characters: %q", n, l)
		}
	}
}
