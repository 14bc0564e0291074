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

// procStartTime returns the start time (clock ticks after boot) of
// PROCROOT/PID/stat.
func procStartTime(procRoot string, pid int) (uint64, error) {
	st, err := procStat(procRoot, pid)
	return st.StartTicks, err
}

// procStat reads PROCROOT/PID/stat through the procfs leaf reader.
func procStat(procRoot string, pid int) (procfs.Stat, error) {
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return procfs.Stat{}, err
	}
	return fs.Stat(pid)
}

// bootID returns PROCROOT/sys/kernel/random/boot_id, "" when unreadable.
func bootID(procRoot string) string {
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return ""
	}
	id, _ := fs.Sysctl("kernel.random.boot_id")
	return id
}

// supervisorAlive says whether the process that wrote a running run is
// still the same process: same boot (curBoot is this boot's id, "" when
// unknown), pid present with the same start time and not exited (a zombie
// waiting to be reaped is dead: it will never finish the run). Unknown identities (0)
// count as alive only on the same boot with the pid present, so a store
// written without /proc is not wrongly marked lost.
func supervisorAlive(procRoot, curBoot string, pid int, start uint64, boot string) bool {
	if pid <= 0 {
		return true // not recorded: nothing to judge by
	}
	if boot != "" && curBoot != "" && curBoot != boot {
		return false
	}
	st, err := procStat(procRoot, pid)
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
