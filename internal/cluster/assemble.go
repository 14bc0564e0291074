package cluster

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
)

// Results are the answers to Queries, by query name; a query that found
// nothing may be missing.
type Results map[string]model.Vector

// target is one scrape target: Prometheus's job and instance labels.
type target struct{ job, instance string }

func targetOf(m model.Metric) target {
	return target{string(m[model.JobLabel]), string(m[model.InstanceLabel])}
}

// ownLabels are job_info's labels that are not the job's workload.
var ownLabels = map[model.LabelName]bool{
	model.MetricNameLabel: true, model.JobLabel: true, model.InstanceLabel: true,
	"job_id": true, "command": true, "run": true,
}

// Assemble arranges the results into nodes, taken at `at` over window w.
// It is pure: the same results give the same summary.
func Assemble(res Results, at time.Time, w time.Duration) *Summary {
	b := builder{nodes: map[target]*Node{}, jobs: map[target]map[string]*Job{}, gpus: map[target]map[string]*GPU{}}
	for _, s := range res[qAgents] {
		b.node(targetOf(s.Metric)).Version = string(s.Metric["version"])
	}
	b.up(res[qUp])
	for _, s := range res[qNode] {
		b.node(targetOf(s.Metric)).Name = string(s.Metric["node"])
	}
	for _, s := range finite(res[qSeen]) {
		sec, frac := math.Modf(float64(s.Value))
		t := time.Unix(int64(sec), int64(frac*1e9)).UTC()
		b.node(targetOf(s.Metric)).LastSeen = &t
	}
	for _, s := range finite(res[qLive]) {
		b.live(s)
	}
	b.ooms(res)
	return &Summary{Time: at.UTC(), WindowSeconds: w.Seconds(), Nodes: b.sorted(), Warnings: duplicateNames(b.nodes)}
}

// finite drops NaN and infinite samples: an agent's gauge can be NaN
// (Prometheus stores what it is sent), JSON cannot carry it, and no
// figure shown is better than a wrong one.
func finite(v model.Vector) model.Vector {
	out := v[:0:0]
	for _, s := range v {
		if f := float64(s.Value); !math.IsNaN(f) && !math.IsInf(f, 0) {
			out = append(out, s)
		}
	}
	return out
}

type builder struct {
	nodes map[target]*Node
	jobs  map[target]map[string]*Job
	gpus  map[target]map[string]*GPU
}

func (b *builder) node(t target) *Node {
	n, ok := b.nodes[t]
	if !ok {
		n = &Node{Instance: t.instance, ScrapeJob: t.job}
		b.nodes[t] = n
		b.jobs[t], b.gpus[t] = map[string]*Job{}, map[string]*GPU{}
	}
	return n
}

// up marks each agent's liveness. A target of a scrape job that holds
// torchmem agents is taken as an agent even before it sent anything:
// an agent down since it was added is the one most worth showing.
func (b *builder) up(v model.Vector) {
	agentJobs := map[string]bool{}
	for t := range b.nodes {
		agentJobs[t.job] = true
	}
	for _, s := range v {
		t := targetOf(s.Metric)
		if _, ok := b.nodes[t]; ok || agentJobs[t.job] {
			b.node(t).Up = s.Value == 1
		}
	}
}

func (b *builder) job(t target, id string) *Job {
	b.node(t)
	j, ok := b.jobs[t][id]
	if !ok {
		j = &Job{ID: id}
		b.jobs[t][id] = j
	}
	return j
}

func (b *builder) gpu(t target, index string) *GPU {
	b.node(t)
	g, ok := b.gpus[t][index]
	if !ok {
		g = &GPU{Index: index}
		b.gpus[t][index] = g
	}
	return g
}

// live files one current series under its node, job or GPU.
func (b *builder) live(s *model.Sample) {
	t, m := targetOf(s.Metric), s.Metric
	v := float64(s.Value)
	name := strings.TrimPrefix(string(m[model.MetricNameLabel]), "torchmem_")
	if jobName, ok := strings.CutPrefix(name, "job_"); ok {
		j := b.job(t, string(m["job_id"]))
		switch jobName {
		case "info":
			j.Command, j.Run = string(m["command"]), string(m["run"])
			j.Workload = workload(m)
		case "processes":
			j.Processes = &v
		case "rss_bytes":
			j.RSSBytes = &v
		case "pss_bytes":
			j.PSSBytes = &v
		case "gpu_memory_bytes":
			j.GPUBytes = &v
		case "cgroup_memory_usage_bytes":
			j.CgroupUsageBytes = &v
		case "cgroup_memory_limit_bytes":
			j.CgroupLimitBytes = &v
		}
		return
	}
	switch name {
	case "gpu_info":
		g := b.gpu(t, string(m["gpu"]))
		g.UUID, g.Model = string(m["uuid"]), string(m["name"])
	case "gpu_memory_used_bytes":
		b.gpu(t, string(m["gpu"])).UsedBytes = &v
	case "gpu_memory_total_bytes":
		b.gpu(t, string(m["gpu"])).TotalBytes = &v
	case "host_memory_total_bytes":
		b.node(t).MemTotalBytes = &v
	case "host_memory_available_bytes":
		b.node(t).MemAvailableBytes = &v
	}
}

// workload is job_info's labels beyond the job's own: the identity
// labels (pod, namespace, Slurm job, container) of agents that export
// them; nil for agents that do not.
func workload(m model.Metric) map[string]string {
	var out map[string]string
	for k, v := range m {
		if ownLabels[k] || v == "" {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[string(k)] = string(v)
	}
	return out
}

// count reads an increase() as a number of events. increase extrapolates
// to the window's edges, so one kill can read 1.04; rounding gives back
// the count of a counter that moves in steps of one.
func count(v model.SampleValue) int {
	if math.IsNaN(float64(v)) || v < 0.5 {
		return 0
	}
	return int(math.Round(float64(v)))
}

func (b *builder) ooms(res Results) {
	for _, s := range res[qHostOOM] {
		b.node(targetOf(s.Metric)).OOMs.HostKills += count(s.Value)
	}
	add := func(q, label string, field func(*OOMs) *map[string]int) {
		for _, s := range res[q] {
			n := count(s.Value)
			if n == 0 {
				continue
			}
			m := field(&b.node(targetOf(s.Metric)).OOMs)
			if *m == nil {
				*m = map[string]int{}
			}
			(*m)[string(s.Metric[model.LabelName(label)])] += n
		}
	}
	add(qIncidents, "kind", func(o *OOMs) *map[string]int { return &o.Incidents })
	add(qJobOOM, "job_id", func(o *OOMs) *map[string]int { return &o.JobKills })
	add(qCUDAOOM, "job_id", func(o *OOMs) *map[string]int { return &o.CUDA })
}

// sorted returns the nodes by name, each with its jobs (most GPU memory,
// then RSS, first) and GPUs (by index), and its jobs' OOM counts filled.
func (b *builder) sorted() []Node {
	out := make([]Node, 0, len(b.nodes))
	for t, n := range b.nodes {
		if n.Name == "" {
			n.Name = n.Instance
		}
		n.Jobs, n.GPUs = []Job{}, []GPU{}
		for _, j := range b.jobs[t] {
			j.OOMKills, j.CUDAOOMs = n.OOMs.JobKills[j.ID], n.OOMs.CUDA[j.ID]
			n.Jobs = append(n.Jobs, *j)
		}
		for _, g := range b.gpus[t] {
			n.GPUs = append(n.GPUs, *g)
		}
		slices.SortFunc(n.Jobs, func(a, b Job) int {
			return cmp.Or(-cmp.Compare(val(a.GPUBytes), val(b.GPUBytes)), -cmp.Compare(val(a.RSSBytes), val(b.RSSBytes)), cmp.Compare(a.ID, b.ID))
		})
		slices.SortFunc(n.GPUs, func(a, b GPU) int {
			return cmp.Or(cmp.Compare(gpuIndex(a.Index), gpuIndex(b.Index)), cmp.Compare(a.Index, b.Index))
		})
		out = append(out, *n)
	}
	slices.SortFunc(out, func(a, b Node) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Instance, b.Instance), cmp.Compare(a.ScrapeJob, b.ScrapeJob))
	})
	return out
}

func val(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func gpuIndex(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return math.MaxInt
	}
	return n
}

// duplicateNames warns of a node name exported by more than one target:
// two agents given the same --node-name (or cloned with the same host
// name) would read as one node.
func duplicateNames(nodes map[target]*Node) []string {
	by := map[string][]string{}
	for _, n := range nodes {
		if n.Name != n.Instance {
			by[n.Name] = append(by[n.Name], n.Instance)
		}
	}
	var out []string
	for name, inst := range by {
		if len(inst) > 1 {
			slices.Sort(inst)
			out = append(out, fmt.Sprintf("node name %q is exported by %d targets (%s): give each agent its own --node-name", name, len(inst), strings.Join(inst, ", ")))
		}
	}
	slices.Sort(out)
	return out
}
