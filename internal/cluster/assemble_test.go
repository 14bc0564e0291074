package cluster

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/common/model"
)

func sample(v float64, labels ...string) *model.Sample {
	m := model.Metric{}
	for i := 0; i+1 < len(labels); i += 2 {
		m[model.LabelName(labels[i])] = model.LabelValue(labels[i+1])
	}
	return &model.Sample{Metric: m, Value: model.SampleValue(v)}
}

// TestAssembleAgentWithoutData: a target of the agents' scrape job that
// never answered is listed as down and never seen; a target of another
// scrape job (node_exporter) is not an agent.
func TestAssembleAgentWithoutData(t *testing.T) {
	res := Results{
		qAgents: {sample(1, "job", "torchmem", "instance", "a:9464", "version", "v1")},
		qUp: {sample(1, "job", "torchmem", "instance", "a:9464"), sample(0, "job", "torchmem", "instance", "new:9464"),
			sample(1, "job", "node", "instance", "a:9100")},
		qNode: {sample(1, "job", "torchmem", "instance", "a:9464", "node", "gpu-1")},
	}
	s := Assemble(res, time.Unix(0, 0), time.Hour)
	if len(s.Nodes) != 2 {
		t.Fatalf("nodes: %+v", s.Nodes)
	}
	if n := s.Nodes[0]; n.Name != "gpu-1" || !n.Up || len(n.Jobs) != 0 || n.Jobs == nil {
		t.Errorf("agent without jobs: %+v", n)
	}
	if n := s.Nodes[1]; n.Name != "new:9464" || n.Up || n.LastSeen != nil {
		t.Errorf("agent never scraped: %+v", n)
	}
}

func TestAssembleDuplicateNodeName(t *testing.T) {
	res := Results{qNode: {sample(1, "job", "t", "instance", "a:1", "node", "same"), sample(1, "job", "t", "instance", "b:1", "node", "same")}}
	s := Assemble(res, time.Unix(0, 0), time.Hour)
	if len(s.Warnings) != 1 || s.Warnings[0] != `node name "same" is exported by 2 targets (a:1, b:1): give each agent its own --node-name` {
		t.Errorf("warnings: %q", s.Warnings)
	}
}

// TestAssembleWorkload: job_info's labels beyond job_id, command and run
// are the job's workload identity, for agents that export it.
func TestAssembleWorkload(t *testing.T) {
	res := Results{qLive: {
		sample(1, "__name__", "torchmem_job_info", "job", "t", "instance", "a:1", "job_id", "pod:uid-1", "command", "python train.py",
			"run", "", "namespace", "ml", "pod", "trainer-0", "container", "main"),
		sample(5e9, "__name__", "torchmem_job_rss_bytes", "job", "t", "instance", "a:1", "job_id", "pod:uid-1"),
		sample(1, "__name__", "torchmem_job_info", "job", "t", "instance", "a:1", "job_id", "pid:7", "command", "python x.py", "run", "r1"),
	}}
	s := Assemble(res, time.Unix(0, 0), time.Hour)
	jobs := s.Nodes[0].Jobs
	if len(jobs) != 2 || jobs[0].ID != "pod:uid-1" || *jobs[0].RSSBytes != 5e9 {
		t.Fatalf("jobs: %+v", jobs)
	}
	if w := jobs[0].Workload; len(w) != 3 || w["namespace"] != "ml" || w["pod"] != "trainer-0" || w["container"] != "main" {
		t.Errorf("workload: %v", w)
	}
	if jobs[1].Workload != nil || jobs[1].Run != "r1" {
		t.Errorf("plain job: %+v", jobs[1])
	}
}

// TestCount: increase() extrapolates to the window's edges; a counter
// that moved by whole events reads back as those events.
func TestCount(t *testing.T) {
	for v, want := range map[float64]int{0: 0, 0.3: 0, 1.04: 1, 2.4: 2, 2.6: 3} {
		if got := count(model.SampleValue(v)); got != want {
			t.Errorf("count(%v) = %d, want %d", v, got, want)
		}
	}
}

func TestOOMsTotal(t *testing.T) {
	o := OOMs{HostKills: 1, Incidents: map[string]int{"cgroup": 1}, JobKills: map[string]int{"pid:1": 1}, CUDA: map[string]int{"pid:1": 2}}
	if o.Total() != 3 {
		t.Errorf("one kernel kill seen three times and two CUDA OOMs: total %d", o.Total())
	}
	if (OOMs{JobKills: map[string]int{"a": 1, "b": 1}}).Total() != 2 {
		t.Error("job kills on a kernel without vmstat oom_kill are counted")
	}
}

// FuzzAssemble: any labels and values Prometheus hands back (agents
// control them) give a summary that encodes as JSON, one node per
// target, and never a panic.
func FuzzAssemble(f *testing.F) {
	f.Add("torchmem_job_info", "127.0.0.1:1", "pid:1", "gpu-a", 1.0, 2.6)
	f.Add("torchmem_gpu_memory_used_bytes", "", "", "", math.NaN(), math.Inf(1))
	f.Add("torchmem_job_rss_bytes", "x", "\xff", "节点", -1.0, -3.0)
	f.Fuzz(func(t *testing.T, name, instance, jobID, node string, v, oom float64) {
		res := Results{
			qAgents:  {sample(1, "job", "t", "instance", instance)},
			qUp:      {sample(v, "job", "t", "instance", instance), sample(0, "job", "t", "instance", instance+"x")},
			qNode:    {sample(1, "job", "t", "instance", instance, "node", node)},
			qSeen:    {sample(v, "job", "t", "instance", instance)},
			qLive:    {sample(v, "__name__", name, "job", "t", "instance", instance, "job_id", jobID, "gpu", jobID)},
			qHostOOM: {sample(oom, "job", "t", "instance", instance)},
			qJobOOM:  {sample(oom, "job", "t", "instance", instance, "job_id", jobID)},
			qCUDAOOM: {sample(oom, "job", "t", "instance", instance, "job_id", jobID)},
		}
		s := Assemble(res, time.Unix(0, 0), time.Hour)
		if len(s.Nodes) != 2 {
			t.Fatalf("%d nodes for 2 targets", len(s.Nodes))
		}
		if _, err := json.Marshal(s); err != nil {
			t.Fatal(err)
		}
	})
}

// BenchmarkAssemble: a cluster of 512 nodes, each with 8 GPUs and 4 jobs
// (the live answer alone is ~45,000 series), as one refresh assembles it.
func BenchmarkAssemble(b *testing.B) {
	res := Results{}
	for n := 0; n < 512; n++ {
		inst := "10.0." + strconv.Itoa(n/256) + "." + strconv.Itoa(n%256) + ":10464"
		lbl := []string{"job", "torchmem", "instance", inst}
		res[qAgents] = append(res[qAgents], sample(1, append(lbl, "version", "v1")...))
		res[qUp] = append(res[qUp], sample(1, lbl...))
		res[qNode] = append(res[qNode], sample(1, append(lbl, "node", "gpu-"+strconv.Itoa(n))...))
		res[qSeen] = append(res[qSeen], sample(1.7e9, lbl...))
		for g := 0; g < 8; g++ {
			for _, m := range []string{"torchmem_gpu_info", "torchmem_gpu_memory_used_bytes", "torchmem_gpu_memory_total_bytes"} {
				res[qLive] = append(res[qLive], sample(1e10, append(lbl, "__name__", m, "gpu", strconv.Itoa(g))...))
			}
		}
		for j := 0; j < 4; j++ {
			for _, m := range []string{"info", "processes", "rss_bytes", "pss_bytes", "gpu_memory_bytes", "cgroup_memory_usage_bytes"} {
				res[qLive] = append(res[qLive], sample(1e9, append(lbl, "__name__", "torchmem_job_"+m, "job_id", "pod:"+strconv.Itoa(j), "pod", "p", "namespace", "ns")...))
			}
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		Assemble(res, time.Unix(0, 0), time.Hour)
	}
}
