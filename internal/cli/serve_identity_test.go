package cli

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/torchmem/torchmem/internal/sample/sampletest"
	"github.com/torchmem/torchmem/internal/tui"
)

// kubelet answers the pod-resources API's List as a kubelet with one
// training pod would.
type kubelet struct {
	podresourcesv1.UnimplementedPodResourcesListerServer
}

func (kubelet) List(context.Context, *podresourcesv1.ListPodResourcesRequest) (*podresourcesv1.ListPodResourcesResponse, error) {
	return &podresourcesv1.ListPodResourcesResponse{PodResources: []*podresourcesv1.PodResources{{
		Name: "train-0", Namespace: "ml", Containers: []*podresourcesv1.ContainerResources{{
			Name: "trainer", Devices: []*podresourcesv1.ContainerDevices{{ResourceName: "nvidia.com/gpu", DeviceIds: []string{"GPU-0"}}},
		}},
	}}}, nil
}

// TestServePodIdentity: the real serve command over a node whose job
// runs in a pod (the kubelet's containerd cgroup path, the environment
// the device plugin gives it) and a kubelet serving pod-resources on a
// Unix socket: /metrics labels the job's series with its pod, namespace
// and container and lists the GPU the kubelet assigned.
func TestServePodIdentity(t *testing.T) {
	dir := t.TempDir()
	tree, err := sampletest.WriteJobTreeV2(dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(tree.ProcRoot, strconv.Itoa(sampletest.MainPID))
	const podPath = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod55c6c714_b240_4dec_9a45_57b61696ab6e.slice/cri-containerd-2032491dcae31e6746f47daa0ac74564f2843a1bd847c5e6c4eb501ca132ac36.scope"
	writeServeFixture(t, filepath.Join(root, "cgroup"), "0::"+podPath+"\n")
	writeServeFixture(t, filepath.Join(root, "environ"), "HOSTNAME=train-0\x00NVIDIA_VISIBLE_DEVICES=GPU-0\x00")
	fake := filepath.Join(dir, "gpu.json")
	writeServeFixture(t, fake, `{"info":{"backend":"fake"},"devices":[{"index":0,"uuid":"GPU-0","name":"NVIDIA H200","total_bytes":150754820096,"used_bytes":4294967296,"free_bytes":146459852800,"numa_node":-1}],"processes":[]}`)

	sockDir, err := os.MkdirTemp("", "kubelet") // a socket path must stay under 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sockDir)
	sock := filepath.Join(sockDir, "kubelet.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	podresourcesv1.RegisterPodResourcesListerServer(gs, kubelet{})
	go gs.Serve(ln)
	defer gs.Stop()

	var errb tui.SyncBuffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &errb, ProcRoot: tree.ProcRoot, SysRoot: tree.SysRoot, Root: dir}
	cmd := NewRoot(env)
	cmd.SetArgs([]string{"serve", "--listen", "127.0.0.1:0", "--gpu-fake", fake, "--interval", "200ms", "--db", filepath.Join(dir, "none.db"),
		"--pod-resources-socket", sock, "--no-kernel-log"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	addr := regexp.MustCompile(`serving http://([^/]+)/`)
	var base string
	for i := 0; i < 100 && base == ""; i++ {
		if m := addr.FindStringSubmatch(errb.String()); m != nil {
			base = "http://" + m[1]
		}
		time.Sleep(50 * time.Millisecond)
	}
	if base == "" {
		t.Fatalf("stderr: %q", errb.String())
	}
	resp, err := http.Get(base + "/metrics") // the first scrape: waits for the first sample
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`torchmem_job_rss_bytes{container="trainer",job_id="pod:55c6c714-b240-4dec-9a45-57b61696ab6e",namespace="ml",pod="train-0"} `,
		`torchmem_job_gpu_assigned_info{UUID="GPU-0",container="trainer",gpu="0",job_id="pod:55c6c714-b240-4dec-9a45-57b61696ab6e",namespace="ml",pod="train-0"} 1`,
		`kind="kubernetes"`, `qos="burstable"`, `runtime="containerd"`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(string(b), "pid=") {
		t.Errorf("per-process series without --process-metrics")
	}
}

func writeServeFixture(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
