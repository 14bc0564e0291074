package identity

// The kubelet's pod-resources API: gRPC over a Unix socket, the service
// v1.PodResourcesLister that dcgm-exporter and the NVIDIA device plugin's
// tooling read. List answers every pod on the node with its containers
// and their devices:
//
//	pod_resources { name: "train-0" namespace: "ml"
//	  containers { name: "trainer" devices { resource_name: "nvidia.com/gpu" device_ids: "GPU-6f1d…" } } }

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"
)

// DefaultPodResourcesSocket is where the kubelet serves the API.
const DefaultPodResourcesSocket = "/var/lib/kubelet/pod-resources/kubelet.sock"

// listTimeout bounds one List call: the kubelet answers from memory in
// milliseconds; a hung kubelet must not hold a sample.
const listTimeout = 2 * time.Second

// maxListBytes bounds the answer (the kubelet's own client uses 16 MiB).
const maxListBytes = 16 << 20

// ErrNotPresent means there is no pod-resources socket on this node.
var ErrNotPresent = errors.New("not present")

// PodContainer is one container of one pod with its devices by resource
// name ("nvidia.com/gpu" -> GPU UUIDs).
type PodContainer struct {
	Namespace, Pod, Container string
	Devices                   map[string][]string
}

// PodLister lists the containers of the pods on this node.
type PodLister interface {
	List(ctx context.Context) ([]PodContainer, error)
}

var _ PodLister = (*PodResources)(nil)

// PodResources is a client of the kubelet's pod-resources socket. The
// connection is made at the first List and kept.
type PodResources struct {
	socket string
	mu     sync.Mutex
	conn   *grpc.ClientConn
}

// NewPodResources returns a client of the socket at path; it connects
// lazily, so a node without a kubelet costs nothing until asked.
func NewPodResources(path string) *PodResources { return &PodResources{socket: path} }

// List asks the kubelet for every pod's containers and devices.
// ErrNotPresent (wrapped) when the socket does not exist.
func (p *PodResources) List(ctx context.Context) ([]PodContainer, error) {
	c, err := p.client()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	resp, err := c.List(ctx, &podresourcesv1.ListPodResourcesRequest{}, grpc.MaxCallRecvMsgSize(maxListBytes))
	if err != nil {
		return nil, fmt.Errorf("kubelet pod-resources %s: %w", p.socket, err)
	}
	return fromList(resp), nil
}

// Close closes the connection, if one was made.
func (p *PodResources) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn == nil {
		return nil
	}
	err := p.conn.Close()
	p.conn = nil
	return err
}

func (p *PodResources) client() (podresourcesv1.PodResourcesListerClient, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn == nil {
		if _, err := os.Stat(p.socket); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("kubelet pod-resources socket %s: %w", p.socket, ErrNotPresent)
			}
			return nil, fmt.Errorf("kubelet pod-resources socket %s: %w", p.socket, err)
		}
		conn, err := grpc.NewClient("unix://"+p.socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return nil, fmt.Errorf("kubelet pod-resources %s: %w", p.socket, err)
		}
		p.conn = conn
	}
	return podresourcesv1.NewPodResourcesListerClient(p.conn), nil
}

// fromList flattens the answer to one entry per container.
func fromList(resp *podresourcesv1.ListPodResourcesResponse) []PodContainer {
	var out []PodContainer
	for _, pod := range resp.GetPodResources() {
		for _, c := range pod.GetContainers() {
			pc := PodContainer{Namespace: pod.GetNamespace(), Pod: pod.GetName(), Container: c.GetName()}
			for _, d := range c.GetDevices() {
				if len(d.GetDeviceIds()) == 0 {
					continue
				}
				if pc.Devices == nil {
					pc.Devices = map[string][]string{}
				}
				pc.Devices[d.GetResourceName()] = append(pc.Devices[d.GetResourceName()], d.GetDeviceIds()...)
			}
			out = append(out, pc)
		}
	}
	return out
}
