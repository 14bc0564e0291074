package identity

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// How often the pod list is asked for: a new pod's containers start
// seconds after the kubelet admits it, so a job not found in the list is
// looked up again after podRetry; a known list is refreshed every
// podRefresh to drop pods that ended.
const (
	podRefresh = 60 * time.Second
	podRetry   = 10 * time.Second
)

// ResolverOptions configures a Resolver.
type ResolverOptions struct {
	// Pods is the kubelet's pod-resources client; nil means no pod names
	// (the pod UID and QoS still come from the cgroup path).
	Pods PodLister
	// Now is the clock (time.Now unless set).
	Now func() time.Time
}

// Resolver turns a job's cgroup path, environment and GPUs into its
// Identity, asking the kubelet (through a cached pod list) only for jobs
// in pods. Safe for use from one goroutine at a time, plus Notices.
type Resolver struct {
	opts ResolverOptions

	mu      sync.Mutex
	pods    []PodContainer
	podsAt  time.Time // last List attempt
	podsOff bool      // no socket: never asked again
	notices []string
	noted   map[string]bool
}

// NewResolver returns a Resolver over opts.
func NewResolver(opts ResolverOptions) *Resolver {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Resolver{opts: opts, noted: map[string]bool{}}
}

// Input is what is known of one job: its root process's cgroup path and
// environ bytes (nil when unreadable), and the UUIDs of the GPUs its
// processes hold.
type Input struct {
	CgroupPath string
	Environ    []byte
	GPUUUIDs   []string
}

// Resolve returns the job's identity. ctx bounds a pod-resources call.
func (r *Resolver) Resolve(ctx context.Context, in Input) Identity {
	id, env := Static(in.CgroupPath, in.Environ)
	return r.NamePod(ctx, id, env, in.GPUUUIDs)
}

// Static is what a process's cgroup path and environment say, which do
// not change while it runs: a caller keeps it and calls NamePod until
// the pod is named.
func Static(cgroupPath string, environ []byte) (Identity, Env) {
	env := ParseEnviron(environ)
	return merge(ParseCgroup(cgroupPath), env), env
}

// NamePod returns id with its pod's name, namespace, container and GPUs
// from the kubelet's list, when id is a pod's and the list has it.
func (r *Resolver) NamePod(ctx context.Context, id Identity, env Env, gpus []string) Identity {
	if id.Kubernetes == nil {
		return id
	}
	k := *id.Kubernetes
	r.fillPod(ctx, &k, env, gpus)
	id.Kubernetes = &k
	return id
}

// CanNamePods reports whether pods may still be named: a pod-resources
// client is configured and its socket was not found missing.
func (r *Resolver) CanNamePods() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.opts.Pods != nil && !r.podsOff
}

// fillPod sets the pod's name, namespace, container and GPUs from the
// kubelet's list: first by a device the job holds or was given, then by
// HOSTNAME when exactly one pod has that name.
func (r *Resolver) fillPod(ctx context.Context, k *Kubernetes, env Env, gpus []string) {
	if r.opts.Pods == nil {
		return
	}
	devs := append(slices.Clone(gpus), env.VisibleDevices...)
	if pc, ok := r.match(ctx, devs, env.Hostname, false); ok {
		setPod(k, pc, devs)
		return
	}
	if pc, ok := r.match(ctx, devs, env.Hostname, true); ok { // a new pod: ask again
		setPod(k, pc, devs)
	}
}

func setPod(k *Kubernetes, pc PodContainer, devs []string) {
	k.Namespace, k.Pod, k.Container = pc.Namespace, pc.Pod, pc.Container
	k.GPUs = gpuDevices(pc)
	k.MatchedBy = "hostname"
	if len(devs) > 0 && overlaps(k.GPUs, devs) {
		k.MatchedBy = "gpu"
	}
}

// match looks the job up in the cached list; with refresh, the list is
// asked for again first when the last attempt is older than podRetry.
func (r *Resolver) match(ctx context.Context, devs []string, hostname string, refresh bool) (PodContainer, bool) {
	pods := r.list(ctx, refresh)
	return matchPod(pods, devs, hostname)
}

// matchPod is the pure matching rule over one pod list.
func matchPod(pods []PodContainer, devs []string, hostname string) (PodContainer, bool) {
	if len(devs) > 0 {
		for _, pc := range pods {
			if overlaps(gpuDevices(pc), devs) {
				return pc, true
			}
		}
	}
	if hostname == "" {
		return PodContainer{}, false
	}
	var found []PodContainer
	for _, pc := range pods {
		if pc.Pod == hostname {
			found = append(found, pc)
		}
	}
	if len(found) == 0 {
		return PodContainer{}, false
	}
	for _, pc := range found[1:] {
		if pc.Namespace != found[0].Namespace {
			return PodContainer{}, false // the same name in two namespaces
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	// Several containers: the only one with GPUs is the training one.
	var withGPU []PodContainer
	for _, pc := range found {
		if len(gpuDevices(pc)) > 0 {
			withGPU = append(withGPU, pc)
		}
	}
	if len(withGPU) == 1 {
		return withGPU[0], true
	}
	pc := found[0]
	pc.Container, pc.Devices = "", nil // the pod is known, not which container
	return pc, true
}

// gpuDevices are a container's device ids of NVIDIA resources
// (nvidia.com/gpu, nvidia.com/mig-1g.10gb, …), sorted.
func gpuDevices(pc PodContainer) []string {
	var out []string
	for res, ids := range pc.Devices {
		if strings.HasPrefix(res, "nvidia.com/") {
			out = append(out, ids...)
		}
	}
	sort.Strings(out)
	return out
}

func overlaps(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// list returns the cached pod list, asking the kubelet when it is older
// than podRefresh, or than podRetry when refresh is set.
func (r *Resolver) list(ctx context.Context, refresh bool) []PodContainer {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.podsOff {
		return nil
	}
	now := r.opts.Now()
	age := now.Sub(r.podsAt)
	due := r.podsAt.IsZero() || age >= podRefresh || (refresh && age >= podRetry)
	if !due {
		return r.pods
	}
	r.podsAt = now
	pods, err := r.opts.Pods.List(ctx)
	switch {
	case errors.Is(err, ErrNotPresent):
		r.podsOff = true
		r.notice("kubernetes: " + err.Error() + "; pods are named by UID only (no pod name, namespace or container)")
		return nil
	case err != nil:
		r.notice("kubernetes: " + err.Error() + " (not root, or the socket is not mounted?); pods are named by UID only until it answers")
		return r.pods
	}
	r.pods = pods
	return pods
}

func (r *Resolver) notice(n string) {
	if !r.noted[n] {
		r.noted[n] = true
		r.notices = append(r.notices, n)
	}
}

// Notices returns the standing notices so far (missing socket, refused
// connection), each once.
func (r *Resolver) Notices() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.notices)
}
