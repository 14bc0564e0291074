package identity

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"
)

// fakeKubelet serves the real v1.PodResourcesLister service over a Unix
// socket, as the kubelet does, answering List from pods.
type fakeKubelet struct {
	podresourcesv1.UnimplementedPodResourcesListerServer
	pods  []*podresourcesv1.PodResources
	calls atomic.Int32
}

func (f *fakeKubelet) List(context.Context, *podresourcesv1.ListPodResourcesRequest) (*podresourcesv1.ListPodResourcesResponse, error) {
	f.calls.Add(1)
	return &podresourcesv1.ListPodResourcesResponse{PodResources: f.pods}, nil
}

// startKubelet listens on a socket in a fresh directory and returns its path.
func startKubelet(t *testing.T, f *fakeKubelet) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "podres") // t.TempDir() can exceed a socket path's 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "kubelet.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	podresourcesv1.RegisterPodResourcesListerServer(srv, f)
	go srv.Serve(ln)
	t.Cleanup(srv.Stop)
	return sock
}

// Two pods as the NVIDIA device plugin leaves them: GPU UUIDs as device
// ids (the form dcgm-exporter's UUID label and nvidia-smi -L print).
func trainingPods() []*podresourcesv1.PodResources {
	gpu := func(ids ...string) []*podresourcesv1.ContainerDevices {
		return []*podresourcesv1.ContainerDevices{{ResourceName: "nvidia.com/gpu", DeviceIds: ids}}
	}
	return []*podresourcesv1.PodResources{
		{Name: "train-0", Namespace: "ml", Containers: []*podresourcesv1.ContainerResources{
			{Name: "trainer", Devices: gpu("GPU-e1200d64-e918-4277-cad9-75da90b9f618", "GPU-3bc239e1-4cc8-97e4-e817-5a36dfd2885e")},
			{Name: "sidecar"},
		}},
		{Name: "vllm-0", Namespace: "serve", Containers: []*podresourcesv1.ContainerResources{
			{Name: "vllm", Devices: gpu("GPU-63bc0b91-2265-1b94-831c-15c41fe92675")},
		}},
	}
}

const podPath = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod55c6c714_b240_4dec_9a45_57b61696ab6e.slice/cri-containerd-2032491dcae31e6746f47daa0ac74564f2843a1bd847c5e6c4eb501ca132ac36.scope"

func TestPodResourcesOverSocket(t *testing.T) {
	kl := &fakeKubelet{pods: trainingPods()}
	pr := NewPodResources(startKubelet(t, kl))
	defer pr.Close()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	r := NewResolver(ResolverOptions{Pods: pr, Now: func() time.Time { return now }})
	ctx := context.Background()

	// By a GPU the job's processes hold.
	id := r.Resolve(ctx, Input{CgroupPath: podPath, GPUUUIDs: []string{"GPU-3bc239e1-4cc8-97e4-e817-5a36dfd2885e"}})
	k := id.Kubernetes
	if k == nil || k.Namespace != "ml" || k.Pod != "train-0" || k.Container != "trainer" || k.MatchedBy != "gpu" || len(k.GPUs) != 2 {
		t.Fatalf("by GPU: %+v", k)
	}
	if id.Key() != "pod:55c6c714-b240-4dec-9a45-57b61696ab6e" {
		t.Errorf("key %q", id.Key())
	}
	// By NVIDIA_VISIBLE_DEVICES, before the job touched a GPU.
	env := []byte("HOSTNAME=whatever\x00NVIDIA_VISIBLE_DEVICES=GPU-63bc0b91-2265-1b94-831c-15c41fe92675\x00")
	if k := r.Resolve(ctx, Input{CgroupPath: podPath, Environ: env}).Kubernetes; k.Pod != "vllm-0" || k.Container != "vllm" {
		t.Errorf("by visible devices: %+v", k)
	}
	// By HOSTNAME: the pod's only GPU container.
	if k := r.Resolve(ctx, Input{CgroupPath: podPath, Environ: []byte("HOSTNAME=train-0\x00")}).Kubernetes; k.Pod != "train-0" || k.Container != "trainer" || k.MatchedBy != "hostname" {
		t.Errorf("by hostname: %+v", k)
	}
	if n := kl.calls.Load(); n != 1 {
		t.Errorf("%d List calls for three jobs within a minute, want 1 (cached)", n)
	}
	// An unknown pod asks again, but not before podRetry.
	r.Resolve(ctx, Input{CgroupPath: podPath, Environ: []byte("HOSTNAME=new-pod\x00")})
	if n := kl.calls.Load(); n != 1 {
		t.Errorf("asked again within podRetry: %d calls", n)
	}
	now = now.Add(podRetry)
	kl.pods = append(kl.pods, &podresourcesv1.PodResources{Name: "new-pod", Namespace: "ml",
		Containers: []*podresourcesv1.ContainerResources{{Name: "c"}}})
	if k := r.Resolve(ctx, Input{CgroupPath: podPath, Environ: []byte("HOSTNAME=new-pod\x00")}).Kubernetes; k.Pod != "new-pod" {
		t.Errorf("new pod not found after retry: %+v", k)
	}
	if len(r.Notices()) != 0 {
		t.Errorf("notices: %v", r.Notices())
	}
}

// TestPodResourcesDegraded: no socket is one notice and pods keep their
// UID and QoS from the cgroup path; a socket nobody serves is a notice
// too, never an error of the sample.
func TestPodResourcesDegraded(t *testing.T) {
	missing := NewPodResources(filepath.Join(t.TempDir(), "kubelet.sock"))
	if _, err := missing.List(context.Background()); !errors.Is(err, ErrNotPresent) {
		t.Fatalf("missing socket: %v", err)
	}
	r := NewResolver(ResolverOptions{Pods: missing})
	for i := 0; i < 3; i++ {
		id := r.Resolve(context.Background(), Input{CgroupPath: podPath})
		if id.Kubernetes == nil || id.Kubernetes.PodUID == "" || id.Kubernetes.Pod != "" {
			t.Fatalf("degraded identity: %+v", id.Kubernetes)
		}
	}
	if n := r.Notices(); len(n) != 1 {
		t.Errorf("notices %v, want one", n)
	}

	dir, _ := os.MkdirTemp("", "podres")
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "kubelet.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ln.Close() // the file may stay; nobody answers
	if f, err := os.Create(sock); err == nil {
		f.Close()
	}
	dead := NewPodResources(sock)
	defer dead.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r = NewResolver(ResolverOptions{Pods: dead})
	if id := r.Resolve(ctx, Input{CgroupPath: podPath}); id.Kubernetes.Pod != "" {
		t.Errorf("pod named without a kubelet: %+v", id.Kubernetes)
	}
	if len(r.Notices()) != 1 {
		t.Errorf("no notice for a dead socket: %v", r.Notices())
	}
}

func TestMatchPodAmbiguous(t *testing.T) {
	pods := []PodContainer{{Namespace: "a", Pod: "x", Container: "c"}, {Namespace: "b", Pod: "x", Container: "c"}}
	if _, ok := matchPod(pods, nil, "x"); ok {
		t.Errorf("a name in two namespaces matched")
	}
	pods = []PodContainer{{Namespace: "a", Pod: "x", Container: "c1"}, {Namespace: "a", Pod: "x", Container: "c2"}}
	if pc, ok := matchPod(pods, nil, "x"); !ok || pc.Container != "" {
		t.Errorf("two CPU containers: %+v %v", pc, ok)
	}
}
