package identity

// /proc/<pid>/environ: the environment the process started with, NUL
// separated (later setenv calls do not show):
//
//	SLURM_JOB_ID=4242\x00SLURM_STEP_ID=0\x00SLURM_JOB_PARTITION=gpu\x00HOSTNAME=train-0\x00…

import (
	"bytes"
	"strconv"
	"strings"
)

// MaxEnviron bounds how much of an environment is read and parsed: a
// Slurm job's is ~10 KB; anything past this is not looked at.
const MaxEnviron = 256 << 10

// maxValue cuts a variable's value; the ones kept are short names.
const maxValue = 256

// Env is the part of a process's environment identity uses.
type Env struct {
	Slurm *Slurm
	// Hostname is HOSTNAME: in a pod, the pod's name unless the pod sets
	// hostname or hostNetwork.
	Hostname string
	// VisibleDevices are the entries of NVIDIA_VISIBLE_DEVICES that name
	// devices by UUID (GPU-…, MIG-…): the NVIDIA device plugin sets them
	// to the container's assigned GPUs. Indexes, "all" and "none" say
	// nothing about which device and are left out.
	VisibleDevices []string
}

// ParseEnviron reads the variables identity uses out of an environ
// file's bytes. Malformed entries are skipped: the file is the job's own.
func ParseEnviron(b []byte) Env {
	if len(b) > MaxEnviron {
		b = b[:MaxEnviron]
	}
	var e Env
	var s Slurm
	for len(b) > 0 {
		var kv []byte
		if i := bytes.IndexByte(b, 0); i >= 0 {
			kv, b = b[:i], b[i+1:]
		} else {
			kv, b = b, nil
		}
		k, v, ok := bytes.Cut(kv, []byte("="))
		if !ok || len(k) == 0 {
			continue
		}
		val := cutValue(v)
		switch string(k) {
		case "SLURM_JOB_ID", "SLURM_JOBID":
			if isDigits(val) {
				s.JobID = val
			}
		case "SLURM_STEP_ID", "SLURM_STEPID":
			s.Step = stepName(val)
		case "SLURM_JOB_UID":
			if n, err := strconv.Atoi(val); err == nil && n >= 0 {
				s.UID = &n
			}
		case "SLURM_JOB_USER":
			s.User = val
		case "SLURM_JOB_PARTITION":
			s.Partition = val
		case "SLURM_CLUSTER_NAME":
			s.Cluster = val
		case "HOSTNAME":
			e.Hostname = val
		case "NVIDIA_VISIBLE_DEVICES":
			e.VisibleDevices = deviceUUIDs(val)
		}
	}
	if s.JobID != "" {
		s.Source = "environ"
		e.Slurm = &s
	}
	return e
}

// stepName turns SLURM_STEP_ID into the name the cgroup path uses: the
// batch script's step is 4294967294 (SLURM_BATCH_SCRIPT) and the extern
// step 4294967295 (SLURM_EXTERN_CONT) in the environment, "batch" and
// "extern" in step_ directories.
func stepName(v string) string {
	switch v {
	case "4294967294":
		return "batch"
	case "4294967295":
		return "extern"
	case "4294967291":
		return "interactive"
	}
	if isDigits(v) {
		return v
	}
	return ""
}

func deviceUUIDs(v string) []string {
	var out []string
	for _, d := range strings.Split(v, ",") {
		d = strings.TrimSpace(d)
		if strings.HasPrefix(d, "GPU-") || strings.HasPrefix(d, "MIG-") {
			out = append(out, d)
		}
	}
	return out
}

// cutValue copies a value, bounded, as valid UTF-8 (it may become a
// label value or reach a terminal through termsafe).
func cutValue(v []byte) string {
	if len(v) > maxValue {
		v = v[:maxValue]
	}
	return strings.ToValidUTF8(string(v), "\uFFFD")
}

// merge fills from env what the cgroup path did not say. The path's job
// and step win; a job found only in the environment is kept with Source
// "environ".
func merge(id Identity, env Env) Identity {
	e := env.Slurm
	if e == nil || id.Kubernetes != nil {
		return id
	}
	if id.Slurm == nil {
		if id.Container != nil {
			return id // a container started from a job's shell inherits its SLURM_*
		}
		c := *e
		id.Slurm, id.Kind, id.Unit = &c, KindSlurm, ""
		return id
	}
	s := *id.Slurm
	if s.JobID == e.JobID {
		if s.Step == "" {
			s.Step = e.Step
		}
		s.User, s.Partition, s.Cluster = e.User, e.Partition, e.Cluster
		if s.UID == nil {
			s.UID = e.UID
		}
	}
	id.Slurm = &s
	return id
}
