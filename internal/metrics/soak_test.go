package metrics

import (
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/torchmem/torchmem/internal/gpu"
	"github.com/torchmem/torchmem/internal/identity"
	"github.com/torchmem/torchmem/internal/jobs"
	"github.com/torchmem/torchmem/internal/sample"
)

// The soak: 24 hours of one 8-GPU torchrun job in a Kubernetes pod, each
// rank with 8 DataLoader workers that are restarted every epoch (the
// PyTorch default without persistent_workers), scraped every 15 s as
// Prometheus does. Halfway through, the job crashes and the kubelet
// restarts it in the same pod (new PIDs everywhere). What counts is the
// number of distinct series Prometheus would have created.
const (
	soakDuration = 24 * time.Hour
	soakScrape   = 15 * time.Second
	soakEpoch    = 20 * time.Minute
	soakRanks    = 8
	soakWorkers  = 8 // DataLoader workers per rank
)

// soakState is the node at time t: a torchrun root, its ranks, and each
// rank's workers, with PIDs that change every epoch (workers) and at the
// job restart (all).
func soakState(t time.Time, start time.Time, id *identity.Identity) *State {
	elapsed := t.Sub(start)
	epoch := int(elapsed / soakEpoch)
	gen := 0
	if elapsed >= soakDuration/2 {
		gen = 1 // the restart
	}
	base := 1000 + gen*500000
	v := func(n uint64) *uint64 { return &n }
	g := func(n int64) *int64 { return &n }
	root := jobs.Process{PID: base, PPid: 1, Name: "torchrun", Cmdline: []string{"torchrun", "--nproc-per-node=8", "train.py"},
		Role: jobs.RoleMain, RSSBytes: v(300 << 20), SwapBytes: v(0), PSSBytes: v(200 << 20)}
	procs := []jobs.Process{root}
	next := base + 100 + epoch*soakRanks*soakWorkers
	for r := 0; r < soakRanks; r++ {
		rank := jobs.Process{PID: base + 1 + r, PPid: base, Name: "python3", Cmdline: []string{"python3", "train.py"},
			Role: jobs.RoleChild, RSSBytes: v(6 << 30), SwapBytes: v(0), PSSBytes: v(5 << 30), GPUBytes: g(70 << 30), GPUIndexes: []int{r}}
		procs = append(procs, rank)
		for w := 0; w < soakWorkers; w++ {
			procs = append(procs, jobs.Process{PID: next, PPid: rank.PID, Name: "python3", Cmdline: rank.Cmdline,
				Role: jobs.RoleWorker, RSSBytes: v(2 << 30), SwapBytes: v(0), PSSBytes: v(400 << 20)})
			next++
		}
	}
	j := sample.Job{Job: jobs.Job{ID: "pid:" + strconv.Itoa(base), RootPID: base, Command: "torchrun --nproc-per-node=8 train.py", Processes: procs}}
	j.Total("fake")
	j.Key = "pid:" + strconv.Itoa(base) + "@" + strconv.Itoa(100+gen*4320000)
	if id != nil {
		j.Identity, j.Key = id, id.Key()
	}
	var devs []gpu.Device
	for i := 0; i < soakRanks; i++ {
		devs = append(devs, gpu.Device{Index: i, UUID: "GPU-" + strconv.Itoa(i), Name: "NVIDIA H200", TotalBytes: 150 << 30, UsedBytes: 71 << 30, FreeBytes: 79 << 30})
	}
	smp := &sample.Sample{Time: t, Jobs: []sample.Job{j}}
	smp.GPU.Info.Backend, smp.GPU.Devices = "fake", devs
	return &State{Sample: smp}
}

// soak runs 24 simulated hours of scrapes through one registry and
// returns the distinct series created and the series of the first scrape.
func soak(t testing.TB, o Options, id *identity.Identity) (created, first int) {
	t.Helper()
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	now := start
	o.NoRuntime = true
	var st *State
	reg := NewRegistry(func() *State { return st }, o)
	seen := map[string]struct{}{}
	for ; now.Sub(start) < soakDuration; now = now.Add(soakScrape) {
		st = soakState(now, start, id)
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				seen[seriesID(mf.GetName(), m.GetLabel())] = struct{}{}
				n++
			}
		}
		if first == 0 {
			first = n
		}
	}
	return len(seen), first
}

func seriesID(name string, ls []*dto.LabelPair) string {
	parts := make([]string, 0, len(ls))
	for _, l := range ls {
		parts = append(parts, l.GetName()+"="+l.GetValue())
	}
	sort.Strings(parts)
	return name + "{" + strings.Join(parts, ",") + "}"
}

var _ prometheus.Gatherer = (*prometheus.Registry)(nil)

func soakPod() *identity.Identity {
	id := identity.ParseCgroup("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod55c6c714_b240_4dec_9a45_57b61696ab6e.slice/cri-containerd-2032491dcae31e6746f47daa0ac74564f2843a1bd847c5e6c4eb501ca132ac36.scope")
	id.Kubernetes.Namespace, id.Kubernetes.Pod, id.Kubernetes.Container = "ml", "train-0", "trainer"
	return &id
}

// TestSoak24h: a day of worker restarts every epoch (and one job restart)
// creates no series beyond one scrape's worth without per-process series,
// and at most the budget more with them; before (per-process always on,
// bounded only by how many are alive) it grew with every epoch.
func TestSoak24h(t *testing.T) {
	if testing.Short() {
		t.Skip("5,760 scrapes")
	}
	created, last := soak(t, Options{}, soakPod())
	t.Logf("pod identity, default: %d series created over 24 h (%d in the first scrape)", created, last)
	if created != last {
		t.Errorf("default: %d series created, want the %d of one scrape (nothing may churn)", created, last)
	}
	created, last = soak(t, Options{}, nil)
	t.Logf("no identity (pid@start key), default: %d created (%d in the first scrape)", created, last)
	if created > 2*last {
		t.Errorf("pid key: %d created, want at most two generations of %d (one job restart)", created, last)
	}
	createdP, lastP := soak(t, Options{ProcessSeries: true}, soakPod())
	t.Logf("pod identity, --process-metrics (budget %d/24h): %d created (%d in the first scrape)", DefaultMaxProcessSeries, createdP, lastP)
	perProc := 5 // rss, pss, uss(absent here), swap, gpu: at most 5 series a process
	if createdP > lastP+perProc*DefaultMaxProcessSeries {
		t.Errorf("process series: %d created, over the budget", createdP)
	}
	unbounded, _ := soak(t, Options{ProcessSeries: true, MaxProcessSeries: 1 << 30}, soakPod())
	t.Logf("pod identity, per-process without a created-series budget (the old behaviour): %d created", unbounded)
	if unbounded <= createdP {
		t.Errorf("the budget bounded nothing: %d vs %d", unbounded, createdP)
	}
}

// BenchmarkServeSoak24h reports the same counts as metrics (series
// created over the simulated day); ns/op is the cost of the whole day.
func BenchmarkServeSoak24h(b *testing.B) {
	for _, c := range []struct {
		name string
		o    Options
	}{{"default", Options{}}, {"process-metrics", Options{ProcessSeries: true}},
		{"process-metrics-unbounded", Options{ProcessSeries: true, MaxProcessSeries: 1 << 30}}} {
		b.Run(c.name, func(b *testing.B) {
			var created, first int
			for i := 0; i < b.N; i++ {
				created, first = soak(b, c.o, soakPod())
			}
			b.ReportMetric(float64(created), "series-created/24h")
			b.ReportMetric(float64(first), "series-first-scrape")
		})
	}
}
