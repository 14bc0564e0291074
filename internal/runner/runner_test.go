package runner

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/store"
	"github.com/torchmem/torchmem/internal/supervisor"
)

func TestCheckLimitSize(t *testing.T) {
	total := uint64(8 << 30)
	for _, c := range []struct {
		n              int64
		total          *uint64
		err, noticeHas string
	}{
		{0, &total, "below the minimum of 32.00 MiB", ""},
		{1 << 10, &total, "--memory-max 1K: below the minimum", ""},
		{32<<20 - 1, &total, "below the minimum", ""},
		{32 << 20, &total, "", ""},
		{8 << 30, &total, "", ""},
		{8<<30 + 1, &total, "", "above this host's memory (MemTotal 8.00 GiB)"},
		{1 << 50, nil, "", ""}, // MemTotal unknown: nothing to compare with
	} {
		note, err := checkLimitSize("memory-max", "1K", c.n, c.total)
		if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) || c.err == "" && err != nil {
			t.Errorf("%d: err %v, want %q", c.n, err, c.err)
		}
		if c.noticeHas != "" && !strings.Contains(note, c.noticeHas) || c.noticeHas == "" && note != "" {
			t.Errorf("%d: notice %q, want %q", c.n, note, c.noticeHas)
		}
	}
}

// A kernel OOM kill (the cgroup's or the host's) is oom-killed with its
// signal, a policy rule's stop stopped (with its signal, or the code of a
// job that caught it), another signal killed, anything else exited with
// its code.
func TestFinishOf(t *testing.T) {
	nine, fifteen := 9, 15
	for _, c := range []struct {
		name   string
		sum    supervisor.Summary
		status store.Status
		sig    *int
		code   *int
	}{
		{"cgroup oom", supervisor.Summary{ExitCode: 137, Signal: &nine, Cause: supervisor.CauseCgroupOOMKill}, store.StatusOOMKilled, &nine, nil},
		{"host oom", supervisor.Summary{ExitCode: 137, Signal: &nine, Cause: supervisor.CauseHostOOMKill}, store.StatusOOMKilled, &nine, nil},
		{"sigterm", supervisor.Summary{ExitCode: 143, Signal: &fifteen, Cause: supervisor.CauseSignal}, store.StatusKilled, &fifteen, nil},
		{"policy stop by SIGTERM", supervisor.Summary{ExitCode: 143, Signal: &fifteen, Cause: supervisor.CausePolicyStop}, store.StatusStopped, &fifteen, nil},
		{"policy stop caught, exit 0", supervisor.Summary{ExitCode: 0, Cause: supervisor.CausePolicyStop}, store.StatusStopped, nil, new(int)},
		{"exit 3", supervisor.Summary{ExitCode: 3, Cause: supervisor.CauseExitCode}, store.StatusExited, nil, new(int)},
	} {
		fin := FinishOf(&supervisor.Result{ExitCode: c.sum.ExitCode, Summary: c.sum})
		if fin.Status != c.status || (fin.Signal == nil) != (c.sig == nil) || c.sig != nil && *fin.Signal != *c.sig {
			t.Errorf("%s: status %q signal %v, want %q %v", c.name, fin.Status, fin.Signal, c.status, c.sig)
		}
		if (fin.ExitCode == nil) != (c.code == nil) || fin.ExitCode != nil && *fin.ExitCode != c.sum.ExitCode {
			t.Errorf("%s: exit code %v", c.name, fin.ExitCode)
		}
		var back supervisor.Summary
		if err := json.Unmarshal(fin.Summary, &back); err != nil || back.Cause != c.sum.Cause {
			t.Errorf("%s: summary %s: %v", c.name, fin.Summary, err)
		}
	}
}

// Snapshots go next to the store, else into the working directory (never
// into the hook dir, which is removed at the end).
func TestSnapshotDir(t *testing.T) {
	if got := snapshotDir(nil, "/scratch", "42"); got != "/scratch/torchmem-42-snapshots" {
		t.Errorf("no store: %s", got)
	}
	path := filepath.Join(t.TempDir(), "h.db")
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got := snapshotDir(db, "/scratch", "abc"); got != filepath.Join(filepath.Dir(path), "snapshots", "abc") {
		t.Errorf("store: %s", got)
	}
}

// Bad settings are refused with the flag's name, before anything starts.
func TestSettingsRefused(t *testing.T) {
	adj := 1001
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Interval: time.Millisecond}, "--interval 1ms: at least 10ms"},
		{Config{Interval: time.Second, OOMScoreAdj: &adj}, "--oom-score-adj 1001: want -1000..1000"},
		{Config{Interval: time.Second, MemoryMax: "lots"}, `--memory-max "lots": want a size`},
		{Config{Interval: time.Second, MemoryMax: "1G", MemoryHigh: "2G"}, "--memory-high 2G is above --memory-max 1G"},
		{Config{Interval: time.Second, GPUThreshold: "90 percent"}, "--gpu-threshold:"},
	} {
		c.cfg.ProcRoot = t.TempDir()
		_, err := c.cfg.supervisorConfig()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
}

// The record keeps the settings as given, for show to print back as flags.
func TestLimitsJSON(t *testing.T) {
	adj := -500
	c := Config{MemoryMax: "64G", GPUThreshold: "90%", NUMA: "auto", OOMScoreAdj: &adj, Interval: 100 * time.Millisecond}
	var m map[string]any
	if err := json.Unmarshal(c.limitsJSON(), &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"memory_max": "64G", "gpu_threshold": "90%", "numa": "auto", "oom_score_adj": -500.0, "interval": "100ms"}
	if len(m) != len(want) {
		t.Errorf("got %v, want %v", m, want)
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s: %v, want %v", k, m[k], v)
		}
	}
}
