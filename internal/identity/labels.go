package identity

import "strconv"

// Run labels: how an Identity is kept with a run in the history store,
// whose labels are a flat string map (store.Run.Labels). slurm_job_id and
// slurm_step_id are the names store.LabelsFromEnv already gives
// SLURM_JOB_ID and SLURM_STEP_ID, so the identity's (from the cgroup
// path) replace the environment's.
const (
	LabelKind             = "workload"
	LabelPodUID           = "k8s_pod_uid"
	LabelQoS              = "k8s_qos"
	LabelNamespace        = "k8s_namespace"
	LabelPod              = "k8s_pod"
	LabelContainer        = "k8s_container"
	LabelContainerID      = "container_id"
	LabelContainerRuntime = "container_runtime"
	LabelSlurmJob         = "slurm_job_id"
	LabelSlurmStep        = "slurm_step_id"
	LabelSlurmUID         = "slurm_uid"
	LabelSlurmUser        = "slurm_user"
	LabelSlurmPartition   = "slurm_partition"
	LabelSlurmCluster     = "slurm_cluster"
	LabelUnit             = "systemd_unit"
)

// Labels flattens the identity to run labels; empty values are left out.
func (id Identity) Labels() map[string]string {
	m := map[string]string{}
	set := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	set(LabelKind, id.Kind)
	if k := id.Kubernetes; k != nil {
		set(LabelPodUID, k.PodUID)
		set(LabelQoS, k.QoS)
		set(LabelNamespace, k.Namespace)
		set(LabelPod, k.Pod)
		set(LabelContainer, k.Container)
	}
	if c := id.Container; c != nil {
		set(LabelContainerID, c.ID)
		set(LabelContainerRuntime, c.Runtime)
	}
	if s := id.Slurm; s != nil {
		set(LabelSlurmJob, s.JobID)
		set(LabelSlurmStep, s.Step)
		if s.UID != nil {
			set(LabelSlurmUID, strconv.Itoa(*s.UID))
		}
		set(LabelSlurmUser, s.User)
		set(LabelSlurmPartition, s.Partition)
		set(LabelSlurmCluster, s.Cluster)
	}
	set(LabelUnit, id.Unit)
	return m
}

// FromLabels rebuilds an identity from run labels written by Labels; a
// run recorded before identities were stored gives the zero Identity.
func FromLabels(m map[string]string) Identity {
	id := Identity{Kind: m[LabelKind], Unit: m[LabelUnit]}
	switch id.Kind {
	case KindKubernetes:
		id.Kubernetes = &Kubernetes{PodUID: m[LabelPodUID], QoS: m[LabelQoS], Namespace: m[LabelNamespace], Pod: m[LabelPod], Container: m[LabelContainer]}
	case KindSlurm:
		s := &Slurm{JobID: m[LabelSlurmJob], Step: m[LabelSlurmStep], User: m[LabelSlurmUser], Partition: m[LabelSlurmPartition], Cluster: m[LabelSlurmCluster]}
		if n, err := strconv.Atoi(m[LabelSlurmUID]); err == nil {
			s.UID = &n
		}
		id.Slurm = s
	}
	if m[LabelContainerID] != "" {
		id.Container = &Container{ID: m[LabelContainerID], Runtime: m[LabelContainerRuntime]}
	}
	return id
}
