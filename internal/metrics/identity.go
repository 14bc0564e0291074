package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/torchmem/torchmem/internal/identity"
	"github.com/torchmem/torchmem/internal/sample"
)

// Labels of every job-level series: the job's stable key and who it
// belongs to, spelled as dcgm-exporter spells them (pod, namespace,
// container) so the two join without label_replace; docs/serve.md has
// the mapping. They are functions of job_id, so they add no cardinality;
// a pod's name, namespace and container are "" until the kubelet's
// pod-resources API names them.
var jobLabelNames = []string{"job_id", "namespace", "pod", "container", "slurm_job_id"}

// jobInfoLabelNames are torchmem_job_info's: the job labels and the rest
// of the identity, the command line and the supervising run.
var jobInfoLabelNames = append(append([]string(nil), jobLabelNames...),
	"kind", "pod_uid", "qos", "container_id", "runtime", "slurm_step", "slurm_uid", "slurm_user", "slurm_partition", "unit",
	"command", "run")

// jobLabels are a job's values of jobLabelNames, then extra.
func jobLabels(j *sample.Job, extra ...string) []string {
	l := make([]string, 0, len(jobLabelNames)+len(extra))
	l = append(l, j.Key, "", "", "", "")
	if id := j.Identity; id != nil {
		if k := id.Kubernetes; k != nil {
			l[1], l[2], l[3] = k.Namespace, k.Pod, k.Container
		}
		if s := id.Slurm; s != nil {
			l[4] = s.JobID
		}
	}
	return append(l, extra...)
}

// jobInfoLabels are a job's values of jobInfoLabelNames.
func jobInfoLabels(j *sample.Job, command, run string) []string {
	id := j.Identity
	if id == nil {
		id = &identity.Identity{}
	}
	var podUID, qos, cid, runtime, step, uid, user, part string
	if k := id.Kubernetes; k != nil {
		podUID, qos = k.PodUID, k.QoS
	}
	if c := id.Container; c != nil {
		cid, runtime = c.ID, c.Runtime
	}
	if s := id.Slurm; s != nil {
		step, user, part = s.Step, s.User, s.Partition
		if s.UID != nil {
			uid = strconv.Itoa(*s.UID)
		}
	}
	return jobLabels(j, id.Kind, podUID, qos, cid, runtime, step, uid, user, part, id.Unit, command, run)
}

// jobsByID indexes the sample's jobs by their sampled id ("pid:1234"),
// which RunState.Job holds.
func jobsByID(smp *sample.Sample) map[string]*sample.Job {
	if smp == nil {
		return nil
	}
	m := make(map[string]*sample.Job, len(smp.Jobs))
	for i := range smp.Jobs {
		m[smp.Jobs[i].ID] = &smp.Jobs[i]
	}
	return m
}

// sparseMetric leaves out labels whose value is "": a job outside
// Kubernetes has no pod, and Prometheus treats an empty label as absent
// anyway, so the exposition need not spell pod="" on every series.
type sparseMetric struct{ prometheus.Metric }

func (m sparseMetric) Write(out *dto.Metric) error {
	if err := m.Metric.Write(out); err != nil {
		return err
	}
	kept := out.Label[:0]
	for _, l := range out.Label {
		if l.GetValue() != "" {
			kept = append(kept, l)
		}
	}
	out.Label = kept
	return nil
}

// sparse wraps m when some label value is empty.
func sparse(m prometheus.Metric, labels []string) prometheus.Metric {
	for _, l := range labels {
		if l == "" {
			return sparseMetric{m}
		}
	}
	return m
}
