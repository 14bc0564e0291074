package supervisor

import (
	"strings"
	"testing"

	"github.com/torchmem/torchmem/internal/hook"
	"github.com/torchmem/torchmem/internal/store"
)

// Measured step peaks raise the run's allocator peaks and make the
// per-step summary; sampled current values no longer count once they come.
func TestStepPeaksRecorded(t *testing.T) {
	c := &fakeClock{}
	s, _, _ := newClockSup(c)
	step := func(n, alloc int64, peaks ...hook.StepPeak) {
		st := &hook.Stats{Step: &n, Steps: 1, CUDAInitialized: true,
			Devices: []hook.DeviceStats{{Allocated: alloc, Reserved: 2 * alloc, PeakAllocated: alloc}}, StepPeaks: peaks}
		s.onHook(hook.Message{Type: hook.TypeStep, Peer: hook.Peer{PID: 7}, Received: c.now(), Stats: st})
	}
	step(1, 500) // before any measured peak: sampled
	if p := s.hk.stepPeaks(); p == nil || p.Measured || p.Allocated != 500 {
		t.Fatalf("sampled summary %+v", p)
	}
	step(2, 100, hook.StepPeak{Allocated: 900, Reserved: 1000})
	step(3, 100, hook.StepPeak{Allocated: 400, Reserved: 1200}, hook.StepPeak{Device: 1, Allocated: 50})
	step(4, 800) // a sampled value after measured ones: ignored in the summary
	p := s.hk.stepPeaks()
	if !p.Measured || p.Allocated != 900 || p.AllocatedStep != 2 || p.Reserved != 1200 || p.ReservedStep != 3 {
		t.Fatalf("summary %+v", p)
	}
	if s.peaks[string(store.PeakAllocPeakAllocated)] != 900 || s.peaks[string(store.PeakAllocPeakReserved)] != 1200 {
		t.Fatalf("run peaks %v", s.peaks)
	}
}

func TestCycleAndCleanupEvents(t *testing.T) {
	c := &fakeClock{}
	s, rec, _ := newClockSup(c)
	n := int64(4096)
	s.onHook(hook.Message{Type: hook.TypeAck, Peer: hook.Peer{PID: 7}, Received: c.now(),
		Ack: &hook.Ack{Cmd: hook.CmdCleanup, OK: true, Freed: new(int64), GCCollected: &n, HostFreed: &n, TrimFreed: &n}})
	s.onHook(hook.Message{Type: hook.TypeCycle, Peer: hook.Peer{PID: 7}, Received: c.now(), Cycle: &hook.Cycle{Tensors: 1, TensorBytes: 4 << 20,
		Types: []hook.TypeCount{{Type: "__main__.Node", Count: 1}, {Type: "torch.Tensor", Count: 1}}, Lines: []string{"train.py:12"}}})
	var msgs []string
	for _, e := range rec.events {
		msgs = append(msgs, e.Kind+": "+e.Message)
	}
	got := strings.Join(msgs, "\n")
	want := "ack: cleanup ok=true gpu_freed=0 gc_collected=4096 host_freed=4096 trim_freed=4096\n" +
		"tensor_cycle: garbage collector freed a reference cycle holding 1 tensor(s), 4194304 bytes: __main__.Node x1, torch.Tensor x1; created at train.py:12"
	if got != want {
		t.Fatalf("events:\n%s\nwant:\n%s", got, want)
	}
}
