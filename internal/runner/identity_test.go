package runner

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRunIdentity: a run started in a Slurm step (a v2 path as
// slurm.schedmd.com/cgroup_v2.html lays it out) records the step from
// the path and the user and partition from the environment; the path's
// job id replaces SLURM_JOB_ID's copy in the labels.
func TestRunIdentity(t *testing.T) {
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "self"), 0o755))
	must(os.WriteFile(filepath.Join(root, "self", "cgroup"), []byte("0::/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0\n"), 0o644))
	env := []string{"SLURM_JOB_ID=4242", "SLURM_JOB_USER=alice", "SLURM_JOB_PARTITION=gpu", "PATH=/usr/bin"}
	id := runIdentity(root, env)
	if id.Short() != "slurm 4242.0 (alice, gpu)" {
		t.Errorf("identity %q", id.Short())
	}
	labels := withIdentity(map[string]string{"slurm_job_id": "4242", "torchelastic_run_id": "x"}, id)
	for k, v := range map[string]string{"workload": "slurm", "slurm_job_id": "4242", "slurm_step_id": "0", "slurm_user": "alice",
		"slurm_partition": "gpu", "torchelastic_run_id": "x"} {
		if labels[k] != v {
			t.Errorf("label %s = %q, want %q (%v)", k, labels[k], v, labels)
		}
	}
	if l := withIdentity(nil, runIdentity(t.TempDir(), nil)); l != nil {
		t.Errorf("no identity, no labels: %v", l)
	}
}
