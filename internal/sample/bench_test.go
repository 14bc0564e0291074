package sample

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/sample/sampletest"
)

// BenchmarkSample is the fast tier for a 33-process job (main + 32
// DataLoader workers) over a fixture tree of real captured files, GPU via
// the fake backend: the per-tick cost of `torchmem top` and `run`.
func BenchmarkSample(b *testing.B) {
	s, _, _ := newSampler(b, 32, func(o *Options) { o.PSSPeriod = time.Hour })
	ctx := context.Background()
	if _, err := s.Collect(ctx); err != nil { // warm: PSS tier and command lines
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		smp, err := s.Collect(ctx)
		if err != nil || smp.Tier.PSSRead != 0 || len(smp.Jobs[0].Processes) != 33 {
			b.Fatalf("collect: %v", err)
		}
	}
	reportCPU(b, cpu)
}

// realJob is shared by the real-job benchmarks: starting 33 torch
// processes takes several seconds.
var (
	realJob     []int
	stopRealJob = func() {}
)

func jobPIDs(b *testing.B) []int {
	if realJob == nil {
		realJob, stopRealJob = startJobUntil(b, 32)
	}
	return realJob
}

func TestMain(m *testing.M) {
	code := m.Run()
	stopRealJob()
	os.Exit(code)
}

// BenchmarkSampleRealJob is the fast tier over a live 33-process torch job
// (PIDs given, as `torchmem run` does), fake GPU.
func BenchmarkSampleRealJob(b *testing.B) {
	pids := jobPIDs(b)
	s, err := New(Options{GPU: fakeGPU(pids[0]), PIDs: func() []int { return pids }, PSSPeriod: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Collect(ctx); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		smp, err := s.Collect(ctx)
		if err != nil || len(smp.Jobs) != 1 || smp.Tier.PSSRead != 0 {
			b.Fatalf("collect: %v", err)
		}
	}
	reportCPU(b, cpu)
}

// BenchmarkPSSTierRealJob forces the PSS tier for all 33 processes each
// iteration; compare with BenchmarkRawSmapsRollupRealJob, the kernel's own
// cost of producing the same files.
func BenchmarkPSSTierRealJob(b *testing.B) {
	pids := jobPIDs(b)
	s, err := New(Options{PIDs: func() []int { return pids }})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var pssSeconds float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.RefreshPSS()
		smp, err := s.Collect(ctx)
		if err != nil || smp.Tier.PSSRead != len(pids) {
			b.Fatalf("collect: %v, read %d", err, smp.Tier.PSSRead)
		}
		pssSeconds += smp.Tier.PSSSeconds
	}
	b.ReportMetric(pssSeconds/float64(b.N)*1e3, "pss-tier-ms/op")
}

// BenchmarkPSSTierVsKernelRealJob alternates, in one loop, the PSS tier for
// the 33 processes and a plain read of the same 33 smaps_rollup files, so
// both see the same machine load: tier-ms/op against kernel-ms/op.
func BenchmarkPSSTierVsKernelRealJob(b *testing.B) {
	pids := jobPIDs(b)
	// One reader, as the plain loop: the overhead compared is user space's.
	s, err := New(Options{PIDs: func() []int { return pids }, PSSWorkers: 1})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var tier, raw time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		for _, pid := range pids {
			if _, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid)); err != nil {
				b.Fatal(err)
			}
		}
		raw += time.Since(start)
		s.RefreshPSS()
		smp, err := s.Collect(ctx)
		if err != nil || smp.Tier.PSSRead != len(pids) {
			b.Fatalf("collect: %v", err)
		}
		tier += time.Duration(smp.Tier.PSSSeconds * float64(time.Second))
	}
	b.ReportMetric(float64(raw.Microseconds())/1e3/float64(b.N), "kernel-ms/op")
	b.ReportMetric(float64(tier.Microseconds())/1e3/float64(b.N), "tier-ms/op")
	b.ReportMetric(100*(float64(tier)/float64(raw)-1), "overhead-%")
}

// BenchmarkRawSmapsRollupRealJob reads the 33 smaps_rollup files and
// nothing else.
func BenchmarkRawSmapsRollupRealJob(b *testing.B) {
	pids := jobPIDs(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, pid := range pids {
			if _, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid)); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkRawStatusRealJob reads the 33 status files: the kernel's floor
// for the fast tier.
func BenchmarkRawStatusRealJob(b *testing.B) {
	pids := jobPIDs(b)
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		for _, pid := range pids {
			if _, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err != nil {
				b.Fatal(err)
			}
		}
	}
	reportCPU(b, cpu)
}

var _ = sampletest.MainPID

// cpuTime is this process's user+system CPU time: the fast tier's budget is
// CPU per sample, which wall time on a loaded 2-core machine overstates.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds cpu-ms/op from a cpuTime taken at the timer's start.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}
