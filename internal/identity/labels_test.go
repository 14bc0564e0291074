package identity

import (
	"reflect"
	"testing"
)

func TestLabelsRoundTrip(t *testing.T) {
	for _, path := range []string{
		"/kubepods/besteffort/pod18d34ce4-50c7-452c-9df8-53c4a3fdf363/a684bbdd0c4b6937b5ece9713bed661305ab0de570eb12b7c28a032aaf602937",
		"/slurm/uid_1000/job_4242/step_0/task_0",
		"/docker/5dace3de0735f73d2b5048f12d41a71741a02e49668de921fdae62f7e65dc498",
		"/system.slice/train.service",
		"/",
	} {
		id := ParseCgroup(path)
		if id.Kubernetes != nil {
			id.Kubernetes.Namespace, id.Kubernetes.Pod, id.Kubernetes.Container = "ml", "train-0", "trainer"
		}
		if id.Slurm != nil {
			id.Slurm.User, id.Slurm.Partition = "alice", "gpu"
			id.Slurm.Source = "" // not kept: a stored run's identity is what it was
		}
		if got := FromLabels(id.Labels()); !reflect.DeepEqual(got, id) || got.Short() != id.Short() {
			t.Errorf("%s: %+v -> %v -> %+v", path, id, id.Labels(), got)
		}
	}
}
