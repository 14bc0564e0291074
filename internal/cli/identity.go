package cli

import "github.com/torchmem/torchmem/internal/identity"

// identityResolver names jobs' workloads for top and serve: from cgroup
// paths and environments always, and through the kubelet's pod-resources
// socket at sock unless it is "" (missing or refused: a notice, pods by
// UID only).
func identityResolver(sock string) *identity.Resolver {
	var pods identity.PodLister
	if sock != "" {
		pods = identity.NewPodResources(sock)
	}
	return identity.NewResolver(identity.ResolverOptions{Pods: pods})
}
