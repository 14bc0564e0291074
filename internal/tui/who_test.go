package tui

import (
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/identity"
	"github.com/torchmem/torchmem/internal/jobs"
	"github.com/torchmem/torchmem/internal/sample"
)

// TestWhoLine: a job in a pod shows namespace/pod/container under its
// title; a job nothing names shows no such line.
func TestWhoLine(t *testing.T) {
	id := identity.ParseCgroup("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod55c6c714_b240_4dec_9a45_57b61696ab6e.slice/cri-containerd-2032491dcae31e6746f47daa0ac74564f2843a1bd847c5e6c4eb501ca132ac36.scope")
	id.Kubernetes.Namespace, id.Kubernetes.Pod, id.Kubernetes.Container = "ml", "train-0", "trainer"
	rss := uint64(1 << 30)
	j := sample.Job{Job: jobs.Job{ID: "pid:7", RootPID: 7, Command: "python3 train.py",
		Processes: []jobs.Process{{PID: 7, Role: jobs.RoleMain, Name: "python3", Cmdline: []string{"python3", "train.py"}, RSSBytes: &rss}}}}
	j.Total("")
	s := &sample.Sample{Jobs: []sample.Job{j}}
	plain := strings.Join(Render(s, ViewOptions{Width: 100}), "\n")
	s.Jobs[0].Identity = &id
	named := strings.Join(Render(s, ViewOptions{Width: 100}), "\n")
	if !strings.Contains(named, "  ml/train-0/trainer") {
		t.Errorf("no who line:\n%s", named)
	}
	if strings.Count(named, "\n") != strings.Count(plain, "\n")+1 {
		t.Errorf("want exactly one more line:\n%s\n---\n%s", plain, named)
	}
}
