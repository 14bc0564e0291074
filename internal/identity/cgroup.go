package identity

// The cgroup path of a process, as the last field of a /proc/<pid>/cgroup
// line, names who started it. Real forms (sources in testdata/README.md):
//
//	/kubepods/burstable/pod1ff47ee6-9685-4726-ac6f-0ff070c452d6/<64 hex>     cgroupfs driver
//	/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod55c6c714_b240_4dec_9a45_57b61696ab6e.slice/cri-containerd-<64 hex>.scope
//	/kubepods-burstable-podb96a7488_3ee1_4bdc_9c98_155cc887b417.slice:cri-containerd:<64 hex>   (v1, containerd's systemd form)
//	/slurm/uid_1000/job_12345/step_0/task_0                                   Slurm, cgroup v1
//	/system.slice/slurmstepd.scope/job_12345/step_0/user/task_0               Slurm, cgroup v2
//	/docker/<64 hex>, /system.slice/docker-<64 hex>.scope                     Docker
//	/user.slice/user-0.slice/user@0.service/machine.slice/libpod-<64 hex>.scope/container   podman

import (
	"strconv"
	"strings"
)

// maxCgroupPath bounds the path ParseCgroup looks at; the kernel's own
// limit (PATH_MAX) is 4096.
const maxCgroupPath = 4096

// ParseCgroup reads the workload identity out of a cgroup path. A path
// that names nothing known gives the zero Identity. A Kubernetes pod
// nested in a container (kind, minikube) is the pod; the container is
// the innermost one.
func ParseCgroup(path string) Identity {
	if len(path) > maxCgroupPath {
		path = path[:maxCgroupPath]
	}
	var id Identity
	segs := strings.Split(path, "/")
	for i, seg := range segs {
		if seg == "" {
			continue
		}
		if k := podSegment(segs, i); k != nil {
			id.Kubernetes, id.Container, id.Slurm = k, nil, nil
		}
		if c := containerSegment(segs, i); c != nil {
			id.Container = c
		}
		if s := slurmAt(segs, i); s != nil && id.Kubernetes == nil {
			id.Slurm = s
		}
		if strings.HasSuffix(seg, ".service") && !strings.HasPrefix(seg, "user@") && !isRuntimeService(seg) {
			id.Unit = seg
		}
	}
	switch {
	case id.Kubernetes != nil:
		id.Kind, id.Unit = KindKubernetes, ""
	case id.Slurm != nil:
		id.Kind, id.Unit = KindSlurm, ""
	case id.Container != nil:
		id.Kind, id.Unit = KindContainer, ""
	}
	return id
}

// isRuntimeService: containerd.service, docker.service and crio.service
// hold other people's containers (v1 paths put pods under them), never
// one job.
func isRuntimeService(seg string) bool {
	switch seg {
	case "containerd.service", "docker.service", "crio.service", "kubelet.service", "slurmd.service":
		return true
	}
	return false
}

// podSegment recognises a pod cgroup: "pod<uid>" under kubepods
// (cgroupfs) or "kubepods[-qos]-pod<uid>.slice" (systemd), where the
// systemd form spells the UID's dashes as underscores. Its QoS class is
// the parent's ("burstable", "besteffort"), guaranteed when the pod sits
// right under kubepods.
func podSegment(segs []string, i int) *Kubernetes {
	seg := segs[i]
	if j := strings.IndexByte(seg, ':'); j >= 0 {
		seg = seg[:j] // "…pod<uid>.slice:cri-containerd:<id>"
	}
	if rest, ok := strings.CutSuffix(seg, ".slice"); ok && strings.HasPrefix(rest, "kubepods-") {
		k := strings.Index(rest, "-pod")
		if k < 0 {
			return nil
		}
		uid := strings.ReplaceAll(rest[k+len("-pod"):], "_", "-")
		if !podUID(uid) {
			return nil
		}
		qos := strings.TrimPrefix(rest[:k], "kubepods")
		return &Kubernetes{PodUID: uid, QoS: qosName(strings.TrimPrefix(qos, "-"))}
	}
	uid, ok := strings.CutPrefix(seg, "pod")
	if !ok || !podUID(uid) || i == 0 {
		return nil
	}
	// A reader in its own cgroup namespace (an agent pod on cgroup v2)
	// sees other pods' paths relative to its own, with ".." for the
	// levels above it: "/../../burstable/pod<uid>/<id>".
	kubepods := func(seg string) bool { return seg == "kubepods" || seg == ".." }
	parent := segs[i-1]
	if kubepods(parent) {
		return &Kubernetes{PodUID: uid, QoS: "guaranteed"}
	}
	if i >= 2 && kubepods(segs[i-2]) && (parent == "burstable" || parent == "besteffort") {
		return &Kubernetes{PodUID: uid, QoS: parent}
	}
	return nil
}

func qosName(s string) string {
	if s == "" {
		return "guaranteed"
	}
	return s
}

// podUID accepts a UUID (36 characters, API-created pods) or 32 hex
// digits (static pods: the hash of their manifest).
func podUID(s string) bool {
	switch len(s) {
	case 32:
		return isHex(s)
	case 36:
		for i := 0; i < len(s); i++ {
			if i == 8 || i == 13 || i == 18 || i == 23 {
				if s[i] != '-' {
					return false
				}
			} else if !isHexDigit(s[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// containerPrefixes maps a scope or directory prefix to its runtime.
var containerPrefixes = []struct{ prefix, runtime string }{
	{"cri-containerd-", "containerd"},
	{"crio-", "cri-o"},
	{"docker-", "docker"},
	{"libpod-", "podman"},
}

// containerSegment recognises a container cgroup: "<prefix><id>.scope"
// (systemd driver), "<pod slice>:cri-containerd:<id>" (containerd's
// systemd form in v1 paths), "docker/<id>" (Docker's cgroupfs driver),
// "libpod_parent/libpod-<id>" (podman's cgroupfs), or a bare id right
// under a pod (Kubernetes' cgroupfs driver, which names no runtime).
func containerSegment(segs []string, i int) *Container {
	seg := segs[i]
	if parts := strings.Split(seg, ":"); len(parts) == 3 && isContainerID(parts[2]) {
		rt := parts[1]
		if rt == "cri-containerd" {
			rt = "containerd"
		}
		return &Container{Runtime: rt, ID: parts[2]}
	}
	name := strings.TrimSuffix(seg, ".scope")
	for _, p := range containerPrefixes {
		if id, ok := strings.CutPrefix(name, p.prefix); ok && isContainerID(id) {
			return &Container{Runtime: p.runtime, ID: id}
		}
	}
	if !isContainerID(seg) || i == 0 {
		return nil
	}
	switch parent := segs[i-1]; {
	case parent == "docker":
		return &Container{Runtime: "docker", ID: seg}
	case strings.HasPrefix(parent, "pod") && podSegment(segs, i-1) != nil:
		return &Container{Runtime: "", ID: seg} // cgroupfs driver: the runtime is not in the path
	}
	return nil
}

func isContainerID(s string) bool { return len(s) == 64 && isHex(s) }

// slurmAt recognises a Slurm job cgroup starting at segs[i]: "slurm" or
// "slurm_<node>" (v1; multiple-slurmd builds add the node name) followed
// by uid_U/job_J[/step_S], or "slurmstepd.scope" / "<node>_slurmstepd.scope"
// (v2) followed by job_J[/step_S].
func slurmAt(segs []string, i int) *Slurm {
	seg := segs[i]
	rest := segs[i+1:]
	s := &Slurm{Source: "cgroup"}
	switch {
	case seg == "slurm" || strings.HasPrefix(seg, "slurm_"):
		if len(rest) < 2 {
			return nil
		}
		uid, ok := strings.CutPrefix(rest[0], "uid_")
		n, err := strconv.Atoi(uid)
		if !ok || err != nil || n < 0 {
			return nil
		}
		s.UID = &n
		rest = rest[1:]
	case seg == "slurmstepd.scope" || strings.HasSuffix(seg, "_slurmstepd.scope"):
	default:
		return nil
	}
	if len(rest) == 0 {
		return nil
	}
	job, ok := strings.CutPrefix(rest[0], "job_")
	if !ok || !isDigits(job) {
		return nil
	}
	s.JobID = job
	if len(rest) > 1 {
		if step, ok := strings.CutPrefix(rest[1], "step_"); ok && step != "" && len(step) <= 32 {
			s.Step = step
		}
	}
	return s
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isHexDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

func isHexDigit(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }

func isDigits(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
