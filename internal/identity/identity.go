// Package identity says whose job a process tree is: the Kubernetes pod
// and container, the Slurm job and step, or the container it runs in,
// read from the process's cgroup path and environment. Nothing is asked
// of a remote system; only the kubelet's pod-resources socket on this node
// (podresources.go), when there is one, adds pod names, namespaces,
// container names and the GPUs assigned, which no local file has.
//
// Sources and trust:
//
//   - The cgroup path (/proc/<pid>/cgroup) is set by the kubelet's
//     runtime or slurmstepd, not by the job: it decides the pod UID, QoS
//     class, container id and Slurm job/step (ParseCgroup).
//   - The environment (/proc/<pid>/environ, readable by root or the
//     process's owner) is the job's own: SLURM_* there fill what the path
//     lacks (partition, user name, step on cgroup v2) but never override
//     the path, since a user can set any SLURM_JOB_ID
//     (unioslo/socker#2 makes the same point).
//   - The pod-resources API (k8s.io/kubelet/pkg/apis/podresources/v1)
//     lists each pod's containers and devices but not pod UIDs, so a job
//     is matched to a container by the GPUs it holds or was given
//     (NVIDIA_VISIBLE_DEVICES), then by HOSTNAME (the pod's name by
//     default), as dcgm-exporter maps GPUs to pods.
//
// Exported API:
//
//	Identity, Kubernetes, Slurm, Container; (Identity).Key(), Short(), Labels(); FromLabels
//	ParseCgroup(path string) Identity
//	ParseEnviron(b []byte) Env
//	Static(cgroupPath string, environ []byte) (Identity, Env)
//	Resolver: NewResolver(ResolverOptions), (*Resolver).Resolve, NamePod, CanNamePods, Notices
//	PodLister, PodContainer; NewPodResources(socket string) *PodResources
package identity

import "strings"

// Kinds of workload, most specific first.
const (
	KindKubernetes = "kubernetes"
	KindSlurm      = "slurm"
	KindContainer  = "container"
)

// Identity is whose job a process tree is. The zero value means nothing
// is known (a process in a login session or a plain system service).
type Identity struct {
	// Kind is KindKubernetes, KindSlurm, KindContainer or "".
	Kind       string      `json:"kind,omitempty"`
	Kubernetes *Kubernetes `json:"kubernetes,omitempty"`
	Slurm      *Slurm      `json:"slurm,omitempty"`
	// Container is the innermost container the job runs in (for a pod,
	// its container's id), nil outside containers.
	Container *Container `json:"container,omitempty"`
	// Unit is a systemd service the job runs as ("train.service"), ""
	// when none; such a unit is one job, so it keys the job's series.
	Unit string `json:"unit,omitempty"`
}

// Kubernetes is a pod's identity. PodUID and QoS come from the cgroup
// path; Namespace, Pod, Container and GPUs from the kubelet's
// pod-resources API ("" and nil without it).
type Kubernetes struct {
	PodUID    string `json:"pod_uid"`
	QoS       string `json:"qos,omitempty"` // guaranteed, burstable, besteffort
	Namespace string `json:"namespace,omitempty"`
	Pod       string `json:"pod,omitempty"`
	Container string `json:"container,omitempty"`
	// GPUs are the device ids the kubelet assigned to the container
	// (nvidia.com/gpu: GPU UUIDs; MIG devices: MIG UUIDs).
	GPUs []string `json:"gpus,omitempty"`
	// MatchedBy says how Pod was found: "gpu" (a device the job holds or
	// was given) or "hostname" (the pod's name in HOSTNAME).
	MatchedBy string `json:"matched_by,omitempty"`
}

// Slurm is a Slurm job step. JobID and Step come from the cgroup path
// when it has them (Source "cgroup"), else from SLURM_* in the
// environment (Source "environ").
type Slurm struct {
	JobID     string `json:"job_id"`
	Step      string `json:"step,omitempty"` // "0", "batch", "extern", "interactive"
	UID       *int   `json:"uid,omitempty"`
	User      string `json:"user,omitempty"`
	Partition string `json:"partition,omitempty"`
	Cluster   string `json:"cluster,omitempty"`
	Source    string `json:"source"`
}

// Container is a container runtime's container.
type Container struct {
	// Runtime is "docker", "containerd", "cri-o" or "podman".
	Runtime string `json:"runtime"`
	ID      string `json:"id"` // 64 hex digits
}

// ShortID is the container id cut to 12 digits, as docker ps shows it.
func (c *Container) ShortID() string {
	if c == nil {
		return ""
	}
	if len(c.ID) > 12 {
		return c.ID[:12]
	}
	return c.ID
}

// Key is a name for the job that survives restarts of its processes:
// "pod:<uid>", "slurm:<job>[.<step>]",
// "container:<id12>", "unit:<name>"; "" when the identity names nothing
// (the caller then keys by root PID and start time).
func (id Identity) Key() string {
	switch {
	case id.Kubernetes != nil:
		// Not the container's name: it is known only once the kubelet
		// answers, and the key must not change when it does.
		return "pod:" + id.Kubernetes.PodUID
	case id.Slurm != nil:
		k := "slurm:" + id.Slurm.JobID
		if id.Slurm.Step != "" {
			k += "." + id.Slurm.Step
		}
		return k
	case id.Container != nil:
		return "container:" + id.Container.ShortID()
	case id.Unit != "":
		return "unit:" + id.Unit
	}
	return ""
}

// Short is a one-line description for people: "ns/pod/container",
// "slurm 1234.0 (alice, gpu)", "docker 3f2a…"; "" when nothing is known.
func (id Identity) Short() string {
	switch {
	case id.Kubernetes != nil:
		k := id.Kubernetes
		if k.Pod == "" {
			return "pod " + k.PodUID
		}
		parts := []string{k.Namespace, k.Pod}
		if k.Container != "" {
			parts = append(parts, k.Container)
		}
		return strings.Join(parts, "/")
	case id.Slurm != nil:
		s := "slurm " + id.Slurm.JobID
		if id.Slurm.Step != "" {
			s += "." + id.Slurm.Step
		}
		var who []string
		if id.Slurm.User != "" {
			who = append(who, id.Slurm.User)
		}
		if id.Slurm.Partition != "" {
			who = append(who, id.Slurm.Partition)
		}
		if len(who) > 0 {
			s += " (" + strings.Join(who, ", ") + ")"
		}
		return s
	case id.Container != nil:
		return id.Container.Runtime + " " + id.Container.ShortID()
	case id.Unit != "":
		return id.Unit
	}
	return ""
}
