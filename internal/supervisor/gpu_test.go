package supervisor

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/gpu"
	"github.com/torchmem/torchmem/internal/policy"
	"github.com/torchmem/torchmem/internal/store"
)

// recorder keeps what the supervisor records, for assertions.
type recorder struct{ events []store.Event }

func (r *recorder) AppendSample(store.Sample)    {}
func (r *recorder) AppendEvent(e store.Event)    { r.events = append(r.events, e) }
func (r *recorder) AppendStep(store.Step)        {}
func (r *recorder) UpdatePeaks(map[string]int64) {}

// TestGPUThresholdCleanup runs a real hooked torch process with a fake GPU
// at 95% used: the --gpu-threshold rule must send the hook a cleanup, once
// (rate limit), and the hook must acknowledge it.
func TestGPUThresholdCleanup(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs a real PyTorch job (TestPolicyForAndEveryOnClock covers the rule on a fake clock); make test runs it")
	}
	py := "/usr/bin/python3"
	if exec.Command(py, "-c", "import torch").Run() != nil {
		t.Skip("no /usr/bin/python3 with torch")
	}
	fake := gpu.NewFake(gpu.Info{Backend: "fake"}, []gpu.Device{{Index: 0, Name: "H200", TotalBytes: 100 << 30, UsedBytes: 95 << 30, NUMANode: -1}}, nil)
	rule := policy.Rule{Name: "gpu-threshold", Metric: policy.GPUUsedFraction, Above: true, Threshold: 0.9,
		Action: policy.Cleanup, Every: policy.DefaultEvery(policy.Cleanup)}
	rec := &recorder{}
	o := runJob(t, Config{Argv: []string{py, "-c", "import torch, time; time.sleep(3)"}, GPU: fake,
		Rules: []policy.Rule{rule}, Hook: true, HookDir: t.TempDir(), Rec: rec})
	if o.res.ExitCode != 0 {
		t.Fatalf("exit %d", o.res.ExitCode)
	}
	var cleanups, acks int
	for _, e := range rec.events {
		switch {
		case e.Kind == policy.Cleanup && strings.Contains(e.Message, "cleanup sent to 1 process"):
			cleanups++
		case e.Kind == "ack" && strings.Contains(e.Message, "cleanup ok=true"):
			acks++
		}
	}
	if cleanups != 1 || acks != 1 {
		for _, e := range rec.events {
			t.Log(e.Kind, e.Message)
		}
		t.Fatalf("cleanups %d acks %d, want 1 and 1", cleanups, acks)
	}
	if o.res.Summary.Peaks["gpu0_used"] != 95<<30 {
		t.Fatalf("peaks %v", o.res.Summary.Peaks)
	}
}

// countingGPU counts Devices calls.
type countingGPU struct {
	gpu.Backend
	calls int
}

func (c *countingGPU) Devices() ([]gpu.Device, error) {
	c.calls++
	return c.Backend.Devices()
}

// TestGPUTotalReadOnce: the allocator's reserved fraction needs each GPU's
// size per hooked process and tick; the backend is asked once.
func TestGPUTotalReadOnce(t *testing.T) {
	b := &countingGPU{Backend: gpu.NewFake(gpu.Info{Backend: "fake"}, []gpu.Device{
		{Index: 0, TotalBytes: 80 << 30, NUMANode: -1}, {Index: 1, TotalBytes: 141 << 30, NUMANode: -1}}, nil)}
	s := &sup{cfg: Config{GPU: b}}
	for i := 0; i < 3; i++ {
		if got := s.gpuTotal(1); got != 141<<30 {
			t.Fatalf("gpuTotal(1) = %d", got)
		}
		if got := s.gpuTotal(0); got != 80<<30 {
			t.Fatalf("gpuTotal(0) = %d", got)
		}
	}
	if got := s.gpuTotal(7); got != 0 {
		t.Fatalf("gpuTotal(7) = %d, want 0 (no such GPU)", got)
	}
	if b.calls != 1 {
		t.Fatalf("Devices called %d times, want 1", b.calls)
	}
	if got := (&sup{}).gpuTotal(0); got != 0 {
		t.Fatalf("no backend: gpuTotal = %d", got)
	}
}
