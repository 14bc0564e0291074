package tui

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/sample"
)

// BenchmarkRender80 renders the fixture job with 32 DataLoader workers at
// 80 columns, folded: what the live view does every tick.
func BenchmarkRender80(b *testing.B) {
	smp := fixtureSample(b, 32)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Render(smp, ViewOptions{Width: 80})
	}
}

// BenchmarkRender200Expanded: every worker listed on a 200-column screen.
func BenchmarkRender200Expanded(b *testing.B) {
	smp := fixtureSample(b, 32)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Render(smp, ViewOptions{Width: 200, Expand: true})
	}
}

// BenchmarkRender80Color is the live view's case: colours on.
func BenchmarkRender80Color(b *testing.B) {
	smp := fixtureSample(b, 32)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Render(smp, ViewOptions{Width: 80, Color: true})
	}
}

// BenchmarkGatherFixture: the live view's own reads after each sample
// (stat of every process; /dev/shm maps every shmPeriod, forced here on
// every other iteration) over the 33-process fixture job.
func BenchmarkGatherFixture(b *testing.B) {
	s, tree := fixtureTree(b, 32)
	smp, err := s.Collect(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	g, err := newGatherer(tree.ProcRoot, b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		if i%2 == 0 {
			g.shm = nil
		}
		g.gather(smp)
	}
	reportCPU(b, cpu)
}

// BenchmarkGatherLive is BenchmarkGatherFixture over this host's jobs
// (start one first, e.g. scripts/tui-demo/dataloader_demo.py); it skips
// when there is none.
func BenchmarkGatherLive(b *testing.B) {
	s, err := sample.New(sample.Options{ProcRoot: "/proc", SysRoot: "/sys"})
	if err != nil {
		b.Fatal(err)
	}
	smp, err := s.Collect(context.Background())
	if err != nil || len(smp.Jobs) == 0 {
		b.Skip("no PyTorch job on this host")
	}
	g, err := newGatherer("/proc", "/", nil)
	if err != nil {
		b.Fatal(err)
	}
	procs := 0
	for _, j := range smp.Jobs {
		procs += len(j.Processes)
	}
	b.Logf("%d jobs, %d processes", len(smp.Jobs), procs)
	b.Run("stat", func(b *testing.B) {
		cpu := cpuTime()
		for i := 0; i < b.N; i++ {
			g.gather(smp)
		}
		reportCPU(b, cpu)
	})
	b.Run("stat+maps", func(b *testing.B) {
		cpu := cpuTime()
		for i := 0; i < b.N; i++ {
			g.shm = nil
			g.gather(smp)
		}
		reportCPU(b, cpu)
	})
}

// cpuTime is this process's user+system CPU time (reading maps is the
// kernel's work, system time): wall time on a loaded machine overstates it.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}
