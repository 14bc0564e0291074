package store

import (
	"crypto/rand"
	"strings"

	"github.com/torchmem/torchmem/internal/procfs"
)

// idAlphabet avoids look-alikes (0/o, 1/l/i) so ids can be typed from a screen.
const idAlphabet = "23456789abcdefghjkmnpqrstuvwxyz"

// newRunID returns a random 6-character id (31^6 ≈ 8.9e8 values).
func newRunID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = idAlphabet[int(b[i])%len(idAlphabet)]
	}
	return string(b)
}

// Procs is what the store reads of this host's processes to tell whether
// the supervisor of a running run is still alive; procfs.FS is one. It is
// injected (Options.Procs): the store opens no /proc path itself.
type Procs interface {
	// Stat reads a process's state and start time; procfs.Stat.Exited is
	// the rule for a process that ended.
	Stat(pid int) (procfs.Stat, error)
	// BootID returns this boot's random id.
	BootID() (string, error)
}

// hostProcs is this host's proc file system, for callers that inject
// none. Without one, every read fails as a missing /proc's would.
func hostProcs() Procs {
	fs, err := procfs.NewFS(procfs.DefaultRoot)
	if err != nil {
		return absentProcs{err}
	}
	return fs
}

type absentProcs struct{ err error }

func (a absentProcs) Stat(int) (procfs.Stat, error) { return procfs.Stat{}, a.err }
func (a absentProcs) BootID() (string, error)       { return "", a.err }

// procStartTime returns the start time (clock ticks after boot) of pid.
func procStartTime(p Procs, pid int) (uint64, error) {
	st, err := p.Stat(pid)
	return st.StartTicks, err
}

// bootID returns this boot's id, "" when unreadable.
func bootID(p Procs) string {
	id, _ := p.BootID()
	return id
}

// supervisorAlive says whether the process that wrote a running run is
// still the same process: same boot (curBoot is this boot's id, "" when
// unknown), pid present with the same start time and not exited (a zombie
// waiting to be reaped is dead: it will never finish the run). Unknown identities (0)
// count as alive only on the same boot with the pid present, so a store
// written without /proc is not wrongly marked lost.
func supervisorAlive(p Procs, curBoot string, pid int, start uint64, boot string) bool {
	if pid <= 0 {
		return true // not recorded: nothing to judge by
	}
	if boot != "" && curBoot != "" && curBoot != boot {
		return false
	}
	st, err := p.Stat(pid)
	if err != nil {
		return !procfs.IsVanished(err)
	}
	return !st.Exited() && (start == 0 || st.StartTicks == start)
}

// LabelsFromEnv picks the launcher ids that tie a run to a cluster job:
// Slurm, torchrun/torchelastic, Kubernetes and PBS variables present in env
// (KEY=VALUE strings).
func LabelsFromEnv(env []string) map[string]string {
	keys := map[string]bool{
		"SLURM_JOB_ID": true, "SLURM_ARRAY_JOB_ID": true, "SLURM_ARRAY_TASK_ID": true,
		"SLURM_STEP_ID": true, "SLURM_JOB_NAME": true, "SLURM_PROCID": true,
		"TORCHELASTIC_RUN_ID": true, "GROUP_RANK": true, "NODE_RANK": true,
		"PBS_JOBID": true, "LSB_JOBID": true, "KUBERNETES_POD_NAME": true, "HOSTNAME": false,
	}
	out := map[string]string{}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if ok && keys[k] && v != "" {
			out[strings.ToLower(k)] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
