package sample

import (
	"context"
	"sort"
	"strconv"

	"github.com/torchmem/torchmem/internal/cgroup"
	"github.com/torchmem/torchmem/internal/identity"
)

// jobIdent is what the Sampler keeps about a job root between Collects:
// its identity (final once it names a pod, or at once for anything
// else) and its start time.
type jobIdent struct {
	id         identity.Identity
	env        identity.Env
	final      bool
	startTicks uint64
}

// identify sets each job's Identity and Key. The cgroup path, environ and
// start time of a root are read once; a pod's name is looked up again
// until the kubelet's list has it (the resolver caches that list).
func (s *Sampler) identify(ctx context.Context, out *Sample) {
	uuids := make(map[int]string, len(out.GPU.Devices))
	for _, d := range out.GPU.Devices {
		uuids[d.Index] = d.UUID
	}
	for i := range out.Jobs {
		j := &out.Jobs[i]
		ps := s.procs[j.RootPID]
		if ps == nil {
			continue
		}
		ji := s.rootIdent(ps, j.RootPID)
		if !ji.final {
			ji.id = s.opts.Identity.NamePod(ctx, ji.id, ji.env, jobGPUs(j, uuids))
			ji.final = ji.id.Kubernetes == nil || ji.id.Kubernetes.Pod != "" || !s.opts.Identity.CanNamePods()
		}
		id := ji.id
		if sl := id.Slurm; sl != nil && sl.UID == nil && len(j.Processes) > 0 {
			// Slurm's v2 layout has no uid_ level: the step runs as the
			// job's user, so the root's real UID (status) is the job's.
			c := *sl
			uid := j.Processes[0].UID
			c.UID = &uid
			id.Slurm = &c
		}
		if id.Kind != "" || id.Unit != "" {
			j.Identity = &id
		}
		j.Key = id.Key()
		if j.Key == "" {
			j.Key = pidKey(j.RootPID, ji.startTicks)
		}
	}
	dedupKeys(out.Jobs, s.procs)
	for _, n := range s.opts.Identity.Notices() {
		s.notice(n)
	}
}

// rootIdent returns the root's kept identity state, reading its cgroup
// path, environ (bounded; EACCES when not root and not the owner) and
// start time, and parsing them, the first time only.
func (s *Sampler) rootIdent(ps *procState, pid int) *jobIdent {
	if ps.ident != nil {
		return ps.ident
	}
	ji := &jobIdent{}
	ps.ident = ji
	if ps.cg == nil {
		if p, err := cgroup.ProcessPath(s.opts.ProcRoot, pid); err == nil {
			ps.cg = &p
		} else {
			ps.cg = &cgroup.Path{}
		}
	}
	environ, _ := s.fs.Environ(pid, identity.MaxEnviron) // nil when unreadable: the path alone decides
	ji.id, ji.env = identity.Static(ps.cg.Path, environ)
	if st, err := s.fs.Stat(pid); err == nil {
		ji.startTicks = st.StartTicks
	}
	return ji
}

// jobGPUs are the UUIDs of the GPUs the job's processes hold memory on.
func jobGPUs(j *Job, uuids map[int]string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range j.Processes {
		for _, i := range p.GPUIndexes {
			if u := uuids[i]; u != "" && !seen[u] {
				seen[u] = true
				out = append(out, u)
			}
		}
	}
	return out
}

// pidKey names a job nothing else names: its root PID and start time
// (clock ticks after boot), so a reused PID is a new job.
func pidKey(pid int, startTicks uint64) string {
	return "pid:" + strconv.Itoa(pid) + "@" + strconv.FormatUint(startTicks, 10)
}

// dedupKeys keeps keys unique within a sample: when two jobs share one
// (two torch programs in one pod or one Slurm step), the one started
// first keeps it and the others get their root's pidKey appended, so the
// long-running job's series do not change when a short one comes and goes.
func dedupKeys(js []Job, procs map[int]*procState) {
	by := map[string][]int{}
	for i := range js {
		by[js[i].Key] = append(by[js[i].Key], i)
	}
	start := func(i int) uint64 {
		if ps := procs[js[i].RootPID]; ps != nil && ps.ident != nil {
			return ps.ident.startTicks
		}
		return 0
	}
	for _, idx := range by {
		if len(idx) < 2 {
			continue
		}
		sort.Slice(idx, func(a, b int) bool {
			sa, sb := start(idx[a]), start(idx[b])
			if sa != sb {
				return sa < sb
			}
			return js[idx[a]].RootPID < js[idx[b]].RootPID
		})
		for _, i := range idx[1:] {
			js[i].Key += "/" + pidKey(js[i].RootPID, start(i))
		}
	}
}
