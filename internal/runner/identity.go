package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/torchmem/torchmem/internal/cgroup"
	"github.com/torchmem/torchmem/internal/identity"
)

// runIdentity is whose run this is: the workload torchmem itself runs
// in (its own cgroup path, read before the job's cgroup exists, and the
// environment the job gets). It is the job's too: the job's cgroup is
// made under torchmem's when that one is delegated, and either way the
// pod, Slurm step or container around them is the same. No kubelet is
// asked (a pod rarely mounts its socket): a pod is recorded by UID.
func runIdentity(procRoot string, env []string) identity.Identity {
	if procRoot == "" {
		procRoot = "/proc"
	}
	var path string
	if b, err := os.ReadFile(filepath.Join(procRoot, "self", "cgroup")); err == nil {
		if p, err := cgroup.ParseProcessPath(string(b)); err == nil {
			path = p.Path
		}
	}
	environ := []byte(strings.Join(env, "\x00"))
	return identity.NewResolver(identity.ResolverOptions{}).Resolve(context.Background(), identity.Input{CgroupPath: path, Environ: environ})
}

// withIdentity adds the identity's run labels to labels (they replace
// the environment's SLURM_* copies: the cgroup path is not the job's to
// set).
func withIdentity(labels map[string]string, id identity.Identity) map[string]string {
	l := id.Labels()
	if len(l) == 0 {
		return labels
	}
	if labels == nil {
		labels = map[string]string{}
	}
	for k, v := range l {
		labels[k] = v
	}
	return labels
}
