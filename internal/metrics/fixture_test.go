package metrics

import (
	"context"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/gpu"
	"github.com/torchmem/torchmem/internal/sample"
	"github.com/torchmem/torchmem/internal/sample/sampletest"
	"github.com/torchmem/torchmem/internal/store"
)

var fixtureTime = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func p64(v int64) *int64 { return &v }

// fakeGPUs is n H200s; the fixture job's main process holds 4 GiB on each
// of the first two, and pids (beyond the main) 1 GiB each on GPU i%n.
func fakeGPUs(n int, pids []int) *gpu.Fake {
	var devs []gpu.Device
	for i := 0; i < n; i++ {
		devs = append(devs, gpu.Device{Index: i, UUID: "GPU-" + itoa(i), Name: "NVIDIA H200", TotalBytes: 150754820096,
			UsedBytes: 4800000000 + int64(i)<<20, FreeBytes: 150754820096 - 4800000000 - int64(i)<<20, ReservedBytes: p64(584056832), NUMANode: -1})
	}
	var procs []gpu.Process
	for i, pid := range pids {
		used, idx := int64(1<<30), i%n
		if i < 2 {
			used, idx = 4<<30, i
			pid = pids[0]
		}
		procs = append(procs, gpu.Process{GPUIndex: idx, GPUUUID: "GPU-" + itoa(idx), PID: pid, HostPID: pid, UsedBytes: p64(used)})
	}
	return gpu.NewFake(gpu.Info{Backend: "fake", DriverVersion: "580.159.04", CUDADriverVersion: "13.0"}, devs, procs)
}

// fixtureSampler samples a fixture job of 1+workers real captured
// processes with n fake GPUs at a fixed time.
func fixtureSampler(t testing.TB, workers, gpus int) *sample.Sampler {
	t.Helper()
	tree, err := sampletest.WriteJobTree(t.TempDir(), workers)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sample.New(sample.Options{ProcRoot: tree.ProcRoot, SysRoot: tree.SysRoot, GPU: fakeGPUs(gpus, tree.PIDs),
		Now: func() time.Time { return fixtureTime }})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// fixtureState is the state of a fixture job supervised by a running
// `torchmem run` (supervisor pid 1, the fixture main's parent).
func fixtureState(t testing.TB, workers, gpus int) *State {
	t.Helper()
	smp, err := fixtureSampler(t, workers, gpus).Collect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	smp.Tier = sample.Tier{FastSeconds: 0.0012, PSSRead: 0, PSSSeconds: 0.004, PSSPeriodSeconds: 10}
	run := store.Run{ID: "k3m9tq", Status: store.StatusRunning, SupervisorPID: 1, Start: fixtureTime.Add(-time.Hour),
		Peaks: map[string]int64{"alloc_peak_allocated": 6 << 30, "alloc_peak_reserved": 7 << 30}}
	latest := &store.Sample{Time: fixtureTime.Add(-time.Second), AllocAllocated: p64(5 << 30), AllocReserved: p64(6 << 30),
		Step: p64(1200), Extra: map[string]float64{store.ExtraAllocRetries: 3}}
	kills := uint64(2)
	st := &State{Sample: smp, HostOOMKills: &kills, Store: true, Runs: []RunState{{Run: run, Latest: latest, CUDAOOMs: 1}}}
	MatchRuns(smp, st.Runs, nil)
	return st
}
