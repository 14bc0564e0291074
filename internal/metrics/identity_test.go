package metrics

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/identity"
)

// TestIdentityLabels: a job in a pod the kubelet named carries pod,
// namespace and container (dcgm-exporter's names) on its series, the
// rest of its identity on torchmem_job_info, and its assigned GPUs with
// dcgm-exporter's UUID label; GPU series carry UUID too.
func TestIdentityLabels(t *testing.T) {
	st := fixtureState(t, 1, 2)
	j := &st.Sample.Jobs[0]
	id := identity.ParseCgroup("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod55c6c714_b240_4dec_9a45_57b61696ab6e.slice/cri-containerd-2032491dcae31e6746f47daa0ac74564f2843a1bd847c5e6c4eb501ca132ac36.scope")
	id.Kubernetes.Namespace, id.Kubernetes.Pod, id.Kubernetes.Container = "ml", "train-0", "trainer"
	id.Kubernetes.GPUs = []string{"GPU-1", "GPU-9"}
	j.Identity, j.Key = &id, id.Key()
	out := scrape(t, st, Options{Version: "test"})
	for _, want := range []string{
		`torchmem_job_rss_bytes{container="trainer",job_id="pod:55c6c714-b240-4dec-9a45-57b61696ab6e",namespace="ml",pod="train-0"} `,
		`container_id="2032491dcae31e6746f47daa0ac74564f2843a1bd847c5e6c4eb501ca132ac36"`,
		`kind="kubernetes"`, `qos="burstable"`, `runtime="containerd"`,
		`torchmem_job_gpu_assigned_info{UUID="GPU-1",container="trainer",gpu="1",job_id="pod:55c6c714-b240-4dec-9a45-57b61696ab6e",namespace="ml",pod="train-0"} 1`,
		`torchmem_job_gpu_assigned_info{UUID="GPU-9",container="trainer",job_id=`, // not on this node's list: no gpu label
		`torchmem_gpu_memory_used_bytes{UUID="GPU-0",gpu="0"} `,
		`torchmem_job_allocator_allocated_bytes{container="trainer",job_id="pod:55c6c714-b240-4dec-9a45-57b61696ab6e",namespace="ml",pod="train-0",run="k3m9tq"} `,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s", want)
		}
	}
	if strings.Contains(out, `=""`) {
		t.Errorf("empty label values exported")
	}

	s := identity.ParseCgroup("/slurm/uid_1000/job_4242/step_0/task_0")
	s.Slurm.User, s.Slurm.Partition = "alice", "gpu"
	j.Identity, j.Key = &s, s.Key()
	out = scrape(t, st, Options{})
	for _, want := range []string{`torchmem_job_processes{job_id="slurm:4242.0",slurm_job_id="4242"} 2`,
		`slurm_step="0"`, `slurm_uid="1000"`, `slurm_user="alice"`, `slurm_partition="gpu"`, `kind="slurm"`} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s", want)
		}
	}
}

// TestNoProcessSeriesByDefault: without ProcessSeries no pid label is
// exported; the per-role series carry the workers.
func TestNoProcessSeriesByDefault(t *testing.T) {
	out := scrape(t, fixtureState(t, 4, 2), Options{})
	if strings.Contains(out, `pid="`) {
		t.Errorf("pid label without ProcessSeries")
	}
	for _, want := range []string{`torchmem_process_series_dropped 5`, `role="worker"} 4`, `torchmem_process_series_created_total 0`} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s", want)
		}
	}
}

// TestPromtoolIdentityAndProcessSeries lints a scrape with every new
// series present: identity labels, assigned GPUs, per-role and
// per-process series, the series budget.
func TestPromtoolIdentityAndProcessSeries(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (Debian package prometheus)")
	}
	st := fixtureState(t, 2, 2)
	id := identity.ParseCgroup("/kubepods/burstable/pod1ff47ee6-9685-4726-ac6f-0ff070c452d6")
	id.Kubernetes.Namespace, id.Kubernetes.Pod, id.Kubernetes.GPUs = "ml", "train-0", []string{"GPU-0"}
	st.Sample.Jobs[0].Identity, st.Sample.Jobs[0].Key = &id, id.Key()
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(scrape(t, st, Options{Version: "test", ProcessSeries: true}))
	if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}
