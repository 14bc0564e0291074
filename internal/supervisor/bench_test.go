package supervisor

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/torchmem/torchmem/internal/jobcgroup"
)

// BenchmarkSampleTick is the cost of one fast-tier tick (cgroup usage and
// limit, meminfo, status of each job process) for a job of 4 processes:
// what --interval 100ms pays ten times a second. PSS is not due.
func BenchmarkSampleTick(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root for a job cgroup")
	}
	g, _, err := jobcgroup.Create(jobcgroup.Options{ProcRoot: "/proc", Name: fmt.Sprintf("bench-%d", os.Getpid())})
	if err != nil {
		b.Skip(err)
	}
	var cmds []*exec.Cmd
	defer func() {
		g.Kill()
		for _, c := range cmds {
			c.Wait()
		}
		g.Delete()
	}()
	for i := 0; i < 4; i++ {
		c := exec.Command("sleep", "60")
		c.Start()
		g.Add(c.Process.Pid)
		cmds = append(cmds, c)
	}
	sm, err := newSampler("/proc", "/sys", nil, g, cmds[0].Process.Pid)
	if err != nil {
		b.Fatal(err)
	}
	sm.collect(time.Now(), allocTotals{step: -1}) // first PSS read of each process
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := sm.collect(time.Now(), allocTotals{step: -1})
		if len(r.pids) != 4 {
			b.Fatalf("pids %v", r.pids)
		}
	}
	b.StopTimer()
}
