package store

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

func openTest(t *testing.T, o Options) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "sub", "t.db"), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestRunLifecycle(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	db := openTest(t, Options{Now: func() time.Time { return t0.Add(5 * time.Second) }})
	r := &Run{Command: []string{"python3", "train.py", "--epochs", "3"}, Cwd: "/tmp", Labels: map[string]string{"slurm_job_id": "42"},
		Limits: json.RawMessage(`{"memory_max":68719476736}`)}
	if err := db.CreateRun(r); err != nil {
		t.Fatal(err)
	}
	if len(r.ID) != 6 || r.Status != StatusRunning || r.SupervisorPID == 0 {
		t.Fatalf("created run %+v", r)
	}
	for i := 0; i < 50; i++ {
		s := Sample{Time: t0.Add(time.Duration(i) * 100 * time.Millisecond), CgroupUsage: Int(int64(1000 + i)), HostAvailable: Int(int64(5000 - i)), Step: Int(int64(i / 10)),
			GPUUsed: []*int64{Int(int64(i)), nil}}
		if err := db.AppendSample(r.ID, s); err != nil {
			t.Fatal(err)
		}
	}
	db.AppendEvent(r.ID, Event{Time: t0.Add(time.Second), Kind: "cleanup", Source: "policy", Message: "gpu0 above 90%", Data: json.RawMessage(`{"freed":123}`)})
	db.AppendStep(r.ID, Step{Time: t0.Add(time.Second), Step: 10, PID: 7, Allocated: Int(99), StepPeakAllocated: Int(150), StepPeakReserved: Int(200)})
	db.UpdatePeaks(r.ID, map[string]int64{"cgroup_usage": 1049})
	code := 3
	if err := db.FinishRun(r.ID, Finish{End: t0.Add(5 * time.Second), Status: StatusExited, ExitCode: &code,
		Peaks: map[string]int64{"cgroup_usage": 10, "pss_total": 77}, Summary: json.RawMessage(`{"verdict":"ok"}`)}); err != nil {
		t.Fatal(err)
	}
	got, err := db.Run(r.ID[:3])
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != StatusExited || *got.ExitCode != 3 || got.Peaks["cgroup_usage"] != 1049 || got.Peaks["pss_total"] != 77 ||
		got.Labels["slurm_job_id"] != "42" || got.Samples != 50 || string(got.Summary) != `{"verdict":"ok"}` || got.Command[3] != "3" {
		t.Fatalf("run = %+v", got)
	}
	all, _ := db.Samples(r.ID, time.Time{}, time.Time{}, 0)
	if len(all) != 50 || *all[49].CgroupUsage != 1049 || *all[3].GPUUsed[0] != 3 || all[3].GPUUsed[1] != nil || all[3].PSSTotal != nil {
		t.Fatalf("samples: %d %+v", len(all), all[3])
	}
	few, _ := db.Samples(r.ID, time.Time{}, time.Time{}, 5)
	if len(few) > 5 || len(few) < 4 {
		t.Fatalf("downsampled to %d points", len(few))
	}
	if *few[len(few)-1].CgroupUsage != 1049 || *few[0].HostAvailable > 4995 {
		t.Fatalf("bucket extremes lost: %+v", few[len(few)-1])
	}
	evs, _ := db.Events(r.ID)
	if len(evs) != 1 || evs[0].Kind != "cleanup" || string(evs[0].Data) != `{"freed":123}` {
		t.Fatalf("events %+v", evs)
	}
	if n, err := db.CountEvents(r.ID, "cleanup"); n != 1 || err != nil {
		t.Fatalf("CountEvents(cleanup) = %d, %v", n, err)
	}
	if n, err := db.CountEvents(r.ID, "cuda_oom"); n != 0 || err != nil {
		t.Fatalf("CountEvents(cuda_oom) = %d, %v", n, err)
	}
	steps, _ := db.Steps(r.ID, 0)
	if len(steps) != 1 || steps[0].Step != 10 || *steps[0].Allocated != 99 || *steps[0].StepPeakAllocated != 150 ||
		*steps[0].StepPeakReserved != 200 || steps[0].PeakAllocated != nil {
		t.Fatalf("steps %+v", steps)
	}
	if last, _ := db.Run("last"); last.ID != r.ID {
		t.Fatalf("last = %s", last.ID)
	}
	if _, err := db.Run("zzzzzzz"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
	list, _ := db.Runs(RunFilter{Label: map[string]string{"slurm_job_id": "42"}, Command: "train.py"})
	if len(list) != 1 {
		t.Fatalf("filter found %d", len(list))
	}
	if list, _ := db.Runs(RunFilter{Status: StatusRunning}); len(list) != 0 {
		t.Fatalf("running filter found %d", len(list))
	}
	running := &Run{Command: []string{"still"}, Start: t0.Add(-time.Hour)}
	db.CreateRun(running)
	if n, err := db.Prune(t0.Add(time.Minute)); n != 1 || err != nil {
		t.Fatalf("pruned %d, %v", n, err)
	}
	var left int
	db.SQL().QueryRow(`SELECT (SELECT COUNT(*) FROM samples)+(SELECT COUNT(*) FROM events)+(SELECT COUNT(*) FROM steps)`).Scan(&left)
	if _, err := db.Run(r.ID); !errors.Is(err, ErrNotFound) || left != 0 {
		t.Fatalf("pruned run still there: %v, %d rows", err, left)
	}
	if _, err := db.Run(running.ID); err != nil {
		t.Fatalf("a running run was pruned: %v", err)
	}
}

func TestLostOnlyOnThisHostAndReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dead := &Run{Command: []string{"a"}, SupervisorPID: 1 << 30} // no such pid here
	other := &Run{Command: []string{"b"}, SupervisorPID: 1 << 30, Host: "another-node"}
	live := &Run{Command: []string{"c"}}
	for _, r := range []*Run{dead, other, live} {
		if err := db.CreateRun(r); err != nil {
			t.Fatal(err)
		}
	}
	db.AppendSample(dead.ID, Sample{Time: time.UnixMilli(1_700_000_000_000), CgroupUsage: Int(1)})
	db.Close()

	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open: %v", err)
	}
	r, _ := ro.Run(dead.ID)
	if r.Status != StatusSupervisorLost || r.End == nil || r.End.UnixMilli() != 1_700_000_000_000 {
		t.Fatalf("read-only view of a dead supervisor's run: %+v", r)
	}
	ro.Close()
	rw, _ := Open(path, Options{})
	defer rw.Close()
	want := map[string]Status{dead.ID: StatusSupervisorLost, other.ID: StatusRunning, live.ID: StatusRunning}
	for id, st := range want {
		var got string
		rw.SQL().QueryRow(`SELECT status FROM runs WHERE id=?`, id).Scan(&got)
		if Status(got) != st {
			t.Errorf("run %s stored as %q, want %q", id, got, st)
		}
	}
}
