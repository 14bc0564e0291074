package supervisor

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/torchmem/torchmem/internal/hook"
	"github.com/torchmem/torchmem/internal/store"
)

// hookState is what the hooked processes told us.
type hookState struct {
	hello      map[int]*hook.Hello
	last       map[int]*hook.Stats // latest allocator stats of non-workers
	step       int64               // highest step seen, -1 before any
	ooms       []pidOOM
	exceptions []pidException
	// cudaPIDs are the processes that reported CUDA devices in their stats.
	cudaPIDs  map[int]bool
	notices   map[string]bool
	perStep   StepPeaks
	stepTimes []float64 // mean step seconds per step message (bounded)
}

// pidOOM and pidException are the hook's reports with the process that
// sent them (the post-mortem checks each claim against that process).
type pidOOM struct {
	PID int
	hook.OOM
}

type pidException struct {
	PID int
	hook.Exception
}

// StepPeaks are the per-step highs from the hook's step messages: the
// step at which allocated and reserved memory peaked, and step time.
// Measured: the highs are the hook's measured step peaks; otherwise they
// are the allocator's current values sampled at step messages.
type StepPeaks struct {
	Measured       bool     `json:"measured,omitempty"`
	AllocatedStep  int64    `json:"allocated_step,omitempty"`
	Allocated      int64    `json:"allocated,omitempty"`
	ReservedStep   int64    `json:"reserved_step,omitempty"`
	Reserved       int64    `json:"reserved,omitempty"`
	MedianStepTime *float64 `json:"median_step_seconds,omitempty"`
}

func newHookState() *hookState {
	return &hookState{hello: map[int]*hook.Hello{}, last: map[int]*hook.Stats{}, step: -1,
		notices: map[string]bool{}, cudaPIDs: map[int]bool{}}
}

// allocTotals sums the latest allocator stats over hooked processes.
type allocTotals struct {
	n                   int
	allocated, reserved int64
	peakAlloc, peakRes  int64
	maxReservedFrac     float64
	step                int64
	retries, ooms       int64 // num_alloc_retries, num_ooms summed
}

// peaks folds the allocator's high-water marks into the run's peaks once
// a process is hooked, 0 included.
func (t allocTotals) peaks(into store.Peaks) {
	if t.n > 0 {
		into.Raise(store.PeakAllocPeakAllocated, t.peakAlloc)
		into.Raise(store.PeakAllocPeakReserved, t.peakRes)
	}
}

func (h *hookState) totals(gpuTotal func(dev int) int64) allocTotals {
	t := allocTotals{step: h.step}
	for _, st := range h.last {
		for _, d := range st.Devices {
			t.n++
			t.allocated += d.Allocated
			t.reserved += d.Reserved
			t.peakAlloc = max(t.peakAlloc, d.PeakAllocated)
			t.peakRes = max(t.peakRes, d.PeakReserved)
			t.retries += d.NumAllocRetries
			t.ooms += d.NumOOMs
			if tot := gpuTotal(d.Device); tot > 0 {
				t.maxReservedFrac = max(t.maxReservedFrac, float64(d.Reserved)/float64(tot))
			}
		}
	}
	return t
}

// onMessage updates the state and returns what to record.
func (s *sup) onHook(m hook.Message) {
	h := s.hk
	pid := m.Peer.PID
	switch m.Type {
	case hook.TypeHello:
		h.hello[pid] = m.Hello
		who := "process"
		if m.Hello.Worker {
			who = "DataLoader worker"
		} else if m.Hello.Rank != nil {
			who = fmt.Sprintf("rank %d", *m.Hello.Rank)
		}
		s.event(m.Received, "hello", "hook", pid, fmt.Sprintf("%s %d hooked (torch %s, step hook %s)", who, pid, m.Hello.Torch, m.Hello.StepHook), nil)
	case hook.TypeStats, hook.TypeStep:
		s.onStats(m)
	case hook.TypeOOM:
		h.ooms = keepEnds(h.ooms, pidOOM{PID: pid, OOM: *m.OOM}, maxKept)
		s.event(m.Received, "cuda_oom", "hook", pid, fmt.Sprintf("CUDA out of memory on device %d: tried to allocate %d bytes with %d free", m.OOM.Device, m.OOM.Alloc, m.OOM.DeviceFree), m.OOM)
		s.sampleNow(m.Received)
	case hook.TypeException:
		h.exceptions = keepEnds(h.exceptions, pidException{PID: pid, Exception: *m.Exception}, maxKept)
		s.event(m.Received, "exception", "hook", pid, firstLine(m.Exception.ExcType+": "+lastLine(m.Exception.Text)), m.Exception)
	case hook.TypeNotice:
		if len(h.notices) >= maxNotices && !h.notices[m.Notice.Text] {
			s.budget.drop("notice")
		} else if !h.notices[m.Notice.Text] {
			h.notices[m.Notice.Text] = true
			s.notice(tr(s.lang())("notice.hook", m.Notice.Text))
		}
	case hook.TypeAck:
		s.event(m.Received, "ack", "hook", pid, ackMessage(m.Ack), m.Ack)
	case hook.TypeCycle:
		s.event(m.Received, "tensor_cycle", "hook", pid, cycleMessage(m.Cycle), m.Cycle)
	case hook.TypeDisconnect:
		delete(h.last, pid)
	}
}

func (s *sup) onStats(m hook.Message) {
	h, st := s.hk, m.Stats
	if hl := h.hello[m.Peer.PID]; hl != nil && hl.Worker {
		return
	}
	h.last[m.Peer.PID] = st
	if len(st.Devices) > 0 {
		h.cudaPIDs[m.Peer.PID] = true
	}
	if st.Step != nil && *st.Step > h.step {
		h.step = *st.Step
	}
	if m.Type != hook.TypeStep || st.Step == nil {
		return
	}
	row := store.Step{Time: m.Received, Step: *st.Step, PID: m.Peer.PID, Steps: st.Steps, StepSeconds: st.StepSeconds}
	if hl := h.hello[m.Peer.PID]; hl != nil {
		row.Rank = hl.Rank
	}
	if len(st.Devices) > 0 {
		var a, r, pa, pr int64
		for _, d := range st.Devices {
			a, r, pa, pr = a+d.Allocated, r+d.Reserved, pa+d.PeakAllocated, pr+d.PeakReserved
		}
		row.Allocated, row.Reserved, row.PeakAllocated, row.PeakReserved = &a, &r, &pa, &pr
		h.perStep.raise(a, r, *st.Step, false)
	}
	if len(st.StepPeaks) > 0 {
		s.recordStepPeaks(&row, st.StepPeaks)
	}
	if st.StepSeconds != nil && len(h.stepTimes) < 100000 {
		h.stepTimes = append(h.stepTimes, *st.StepSeconds)
	}
	if s.budget.takeStep() {
		s.cfg.Rec.AppendStep(row)
	}
}

// recordStepPeaks puts the hook's measured step peaks into row and into
// the run's peaks: the hook resets the allocator's peaks at every step, so
// a stats message's peak only covers the step in progress and these
// messages carry the rest.
func (s *sup) recordStepPeaks(row *store.Step, peaks []hook.StepPeak) {
	var a, r int64
	for _, p := range peaks {
		a, r = a+p.Allocated, r+p.Reserved
	}
	row.StepPeakAllocated, row.StepPeakReserved = &a, &r
	s.hk.perStep.raise(a, r, row.Step, true)
	s.peaks.Raise(store.PeakAllocPeakAllocated, a)
	s.peaks.Raise(store.PeakAllocPeakReserved, r)
}

// raise keeps the highest allocated and reserved bytes and their steps.
// Once a measured step peak arrives, sampled values no longer count.
func (p *StepPeaks) raise(a, r, step int64, measured bool) {
	if measured && !p.Measured {
		*p = StepPeaks{Measured: true, MedianStepTime: p.MedianStepTime}
	} else if !measured && p.Measured {
		return
	}
	if a > p.Allocated {
		p.Allocated, p.AllocatedStep = a, step
	}
	if r > p.Reserved {
		p.Reserved, p.ReservedStep = r, step
	}
}

// cycleMessage is the event line of a --detect-cycles report.
func cycleMessage(c *hook.Cycle) string {
	types := make([]string, 0, len(c.Types))
	for _, t := range c.Types {
		types = append(types, fmt.Sprintf("%s x%d", t.Type, t.Count))
	}
	msg := fmt.Sprintf("garbage collector freed a reference cycle holding %d tensor(s), %d bytes: %s", c.Tensors, c.TensorBytes, strings.Join(types, ", "))
	if len(c.Lines) > 0 {
		msg += "; created at " + strings.Join(c.Lines, ", ")
	}
	return msg
}

// ackMessage is the event line of a command's answer; cleanup says what
// it gave back (GPU cache, objects collected, host bytes).
func ackMessage(a *hook.Ack) string {
	msg := fmt.Sprintf("%s ok=%v", a.Cmd, a.OK)
	if a.Error != "" {
		msg += " " + a.Error
	}
	if a.Cmd != hook.CmdCleanup || !a.OK {
		return msg
	}
	for _, f := range []struct {
		name string
		v    *int64
	}{{"gpu_freed", a.Freed}, {"gc_collected", a.GCCollected}, {"host_freed", a.HostFreed}, {"trim_freed", a.TrimFreed}} {
		if f.v != nil {
			msg += fmt.Sprintf(" %s=%d", f.name, *f.v)
		}
	}
	return msg
}

// event shows an event in the live view and stores it within the run's
// budget (runBudget); the exit event is always stored.
func (s *sup) event(t time.Time, kind, source string, pid int, msg string, data any) {
	e := s.liveEvent(t, kind, source, pid, msg, data)
	if kind == "exit" || s.budget.takeEvent(len(e.Message)+len(e.Data)) {
		s.cfg.Rec.AppendEvent(e)
	}
}

// storeEvent is event outside the budget (the budget's own notice).
func (s *sup) storeEvent(t time.Time, kind, source string, pid int, msg string, data any) {
	s.cfg.Rec.AppendEvent(s.liveEvent(t, kind, source, pid, msg, data))
}

func (s *sup) liveEvent(t time.Time, kind, source string, pid int, msg string, data any) store.Event {
	e := store.Event{Time: t, Kind: kind, Source: source, PID: pid, Message: msg}
	if data != nil {
		e.Data = mustJSON(data)
	}
	s.events = append(s.events, e)
	if len(s.events) > 2*liveEvents { // trimmed in batches, not on every event
		s.events = append(s.events[:0], s.events[len(s.events)-liveEvents:]...)
	}
	return e
}

// stepPeaks returns the per-step summary with the median step time.
func (h *hookState) stepPeaks() *StepPeaks {
	p := h.perStep
	if len(h.stepTimes) > 0 {
		t := append([]float64(nil), h.stepTimes...)
		sort.Float64s(t)
		m := t[len(t)/2]
		p.MedianStepTime = &m
	}
	if p == (StepPeaks{}) {
		return nil
	}
	return &p
}
