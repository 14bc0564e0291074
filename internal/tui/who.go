package tui

import "github.com/torchmem/torchmem/internal/sample"

// whoLine shows whose job j is under its title: the pod
// (namespace/pod/container, or the pod UID when the kubelet was not
// asked), the Slurm job step with its user and partition, the container
// or the systemd unit (identity.Identity.Short: names, not prose, so the
// same in every language); nothing when no cgroup path or environment
// named one.
func (r *renderer) whoLine(j sample.Job) {
	if j.Identity == nil {
		return
	}
	if s := j.Identity.Short(); s != "" {
		r.line(r.st.dim, "  "+s)
	}
}
