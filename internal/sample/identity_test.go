package sample

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/identity"
	"github.com/torchmem/torchmem/internal/sample/sampletest"
)

// pods is a kubelet's list as identity.PodLister.
type pods []identity.PodContainer

func (p pods) List(context.Context) ([]identity.PodContainer, error) { return p, nil }

// TestJobIdentity: the fixture job's root gets a real kubelet cgroup path
// (containerd, systemd driver; netdata/netdata#4868) and an environment
// as the NVIDIA device plugin leaves it; the job is then the pod's, named
// through the pod list, and keyed by the pod UID.
func TestJobIdentity(t *testing.T) {
	tree, err := sampletest.WriteJobTreeV2(t.TempDir(), 2)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(tree.ProcRoot, itoa(sampletest.MainPID))
	const podPath = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod55c6c714_b240_4dec_9a45_57b61696ab6e.slice/cri-containerd-2032491dcae31e6746f47daa0ac74564f2843a1bd847c5e6c4eb501ca132ac36.scope"
	must(t, os.WriteFile(filepath.Join(root, "cgroup"), []byte("0::"+podPath+"\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "environ"), []byte("HOSTNAME=train-0\x00NVIDIA_VISIBLE_DEVICES=GPU-e1200d64-e918-4277-cad9-75da90b9f618\x00"), 0o644))
	list := pods{{Namespace: "ml", Pod: "train-0", Container: "trainer",
		Devices: map[string][]string{"nvidia.com/gpu": {"GPU-e1200d64-e918-4277-cad9-75da90b9f618"}}}}
	s, err := New(Options{ProcRoot: tree.ProcRoot, SysRoot: tree.SysRoot,
		Identity: identity.NewResolver(identity.ResolverOptions{Pods: list})})
	must(t, err)
	smp, err := s.Collect(context.Background())
	must(t, err)
	if len(smp.Jobs) != 1 {
		t.Fatalf("%d jobs", len(smp.Jobs))
	}
	j := smp.Jobs[0]
	if j.Key != "pod:55c6c714-b240-4dec-9a45-57b61696ab6e" {
		t.Errorf("key %q", j.Key)
	}
	k := j.Identity.Kubernetes
	if k == nil || k.Namespace != "ml" || k.Pod != "train-0" || k.Container != "trainer" || k.QoS != "burstable" {
		t.Errorf("identity %+v", k)
	}
	if c := j.Identity.Container; c == nil || c.Runtime != "containerd" {
		t.Errorf("container %+v", c)
	}
}

// TestJobKeyWithoutIdentity: a job nothing names is keyed by its root's
// PID and start time, and two jobs of one Slurm step get distinct keys,
// the first started keeping the plain one.
func TestJobKeyWithoutIdentity(t *testing.T) {
	tree, err := sampletest.WriteJobTree(t.TempDir(), 1)
	must(t, err)
	root := filepath.Join(tree.ProcRoot, itoa(sampletest.MainPID))
	stat := itoa(sampletest.MainPID) + " (python3) S 1 1 1 0 -1 0 0 0 0 0 5 3 0 0 20 0 1 0 777 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	must(t, os.WriteFile(filepath.Join(root, "stat"), []byte(stat), 0o644))
	s, err := New(Options{ProcRoot: tree.ProcRoot, SysRoot: tree.SysRoot})
	must(t, err)
	smp, err := s.Collect(context.Background())
	must(t, err)
	if got := smp.Jobs[0].Key; got != "pid:2000@777" || smp.Jobs[0].Identity != nil {
		t.Errorf("key %q identity %+v", got, smp.Jobs[0].Identity)
	}

	js := []Job{{Key: "slurm:7.0"}, {Key: "slurm:7.0"}, {Key: "pod:x"}}
	js[0].RootPID, js[1].RootPID = 30, 20
	procs := map[int]*procState{30: {ident: &jobIdent{startTicks: 100}}, 20: {ident: &jobIdent{startTicks: 200}}}
	dedupKeys(js, procs)
	if js[0].Key != "slurm:7.0" || js[1].Key != "slurm:7.0/pid:20@200" || js[2].Key != "pod:x" {
		t.Errorf("dedup: %q %q %q", js[0].Key, js[1].Key, js[2].Key)
	}
}

// TestSlurmV2UID: Slurm's v2 path names no uid; the step's root runs as
// the job's user, so its UID is the job's.
func TestSlurmV2UID(t *testing.T) {
	tree, err := sampletest.WriteJobTreeV2(t.TempDir(), 1)
	must(t, err)
	root := filepath.Join(tree.ProcRoot, itoa(sampletest.MainPID))
	must(t, os.WriteFile(filepath.Join(root, "cgroup"), []byte("0::/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0\n"), 0o644))
	s, err := New(Options{ProcRoot: tree.ProcRoot, SysRoot: tree.SysRoot})
	must(t, err)
	smp, err := s.Collect(context.Background())
	must(t, err)
	j := smp.Jobs[0]
	sl := j.Identity.Slurm
	if j.Key != "slurm:4242.0" || sl.UID == nil || *sl.UID != j.Processes[0].UID {
		t.Errorf("key %q slurm %+v, root uid %d", j.Key, sl, j.Processes[0].UID)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil && !strings.Contains(err.Error(), "context canceled") {
		t.Fatal(err)
	}
}
