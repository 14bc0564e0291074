package store

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// procStartTime returns field 22 (starttime, clock ticks since boot) of
// PROCROOT/PID/stat:
//
//	4242 (python3) S 4200 4242 ... 22 fields in ... 8374612 ...
//
// The command name may contain spaces and parentheses, so fields are
// counted after the last ')'.
func procStartTime(procRoot string, pid int) (uint64, error) {
	path := filepath.Join(procRoot, strconv.Itoa(pid), "stat")
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return parseStatStartTime(string(b))
}

func parseStatStartTime(s string) (uint64, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("stat: no ')' after comm")
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); starttime is field 22.
	if len(f) < 20 {
		return 0, fmt.Errorf("stat: %d fields after comm, want at least 20", len(f))
	}
	v, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("stat: starttime %q: %w", f[19], err)
	}
	return v, nil
}

// bootID returns PROCROOT/sys/kernel/random/boot_id, "" when unreadable.
func bootID(procRoot string) string {
	b, err := os.ReadFile(filepath.Join(procRoot, "sys", "kernel", "random", "boot_id"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// supervisorAlive says whether the process that wrote a running run is
// still the same process: same boot, pid present with the same start time.
// Unknown identities (0) count as alive only on the same boot with the pid
// present, so a store written without /proc is not wrongly marked lost.
func supervisorAlive(procRoot string, pid int, start uint64, boot string) bool {
	if pid <= 0 {
		return true // not recorded: nothing to judge by
	}
	if cur := bootID(procRoot); boot != "" && cur != "" && cur != boot {
		return false
	}
	st, err := procStartTime(procRoot, pid)
	if err != nil {
		return !os.IsNotExist(err) && !isNoSuchProcess(err)
	}
	return start == 0 || st == start
}

func isNoSuchProcess(err error) bool {
	return strings.Contains(err.Error(), "no such process")
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
