package snapshot

import (
	"sort"
	"strings"
)

// Phase is the part of a training step an allocation was made in.
type Phase uint8

// Phases. PhaseOther is everything outside the three: loading the model,
// making inputs, logging.
const (
	PhaseOther Phase = iota
	PhaseForward
	PhaseBackward
	PhaseOptimizer
	nPhases
)

var phaseNames = [...]string{"other", "forward", "backward", "optimizer"}

// String is the phase's name as the CLI and the JSON write it.
func (p Phase) String() string { return phaseNames[p] }

// MarshalText writes the name.
func (p Phase) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// stackFacts is what one stack says about where an allocation came from.
type stackFacts struct {
	empty      bool // no frames at all: the autograd engine's thread under stacks="python"
	optimizer  bool // a torch/optim frame
	initGroup  bool // the optimizer creating its per-parameter state
	backward   bool // torch.autograd's backward, or the C++ engine or a generated backward node
	forward    bool // an nn.Module call or torch.nn.functional
	parameters bool // Module._apply (.to/.cuda), parameter init, module construction
	userDirect bool // the innermost Python frame is the user's own code
	workspace  bool // cuBLAS's workspace, set up on a handle's first use
}

// factsOf reads a stack's facts from its frames (innermost first).
func (s *Snapshot) factsOf(stack []FrameID) stackFacts {
	f := stackFacts{empty: len(stack) == 0}
	sawPython := false
	for _, fid := range stack {
		fr := s.Frames[fid]
		switch fr.Kind() {
		case FrameNative:
			if strings.HasPrefix(fr.Name, "torch::autograd::Engine::") || strings.HasPrefix(fr.Name, "torch::autograd::generated::") {
				f.backward = true
			}
			if strings.HasPrefix(fr.Name, "at::cuda::setWorkspaceForHandle") || strings.HasPrefix(fr.Name, "at::cuda::getCUDABlasLtWorkspace") {
				f.workspace = true
			}
			continue
		case FrameUser:
			if !sawPython {
				f.userDirect = true
			}
		}
		sawPython = true
		if fr.Kind() != FrameLibrary {
			continue
		}
		p := libraryPath(fr.Filename)
		switch {
		case strings.HasPrefix(p, "torch/optim/"):
			f.optimizer = true
			f.initGroup = f.initGroup || fr.Name == "_init_group"
		case p == "torch/autograd/__init__.py" || p == "torch/autograd/graph.py" || (p == "torch/_tensor.py" && fr.Name == "backward"):
			f.backward = true
		case p == "torch/nn/modules/module.py" && fr.Name == "_apply",
			p == "torch/nn/parameter.py", p == "torch/nn/init.py", fr.Name == "reset_parameters",
			strings.HasPrefix(p, "torch/nn/modules/") && fr.Name == "__init__",
			p == "transformers/modeling_utils.py" && (fr.Name == "from_pretrained" || strings.HasPrefix(fr.Name, "_load")):
			f.parameters = true
		case p == "torch/nn/modules/module.py" && fr.Name == "_call_impl", p == "torch/nn/functional.py":
			f.forward = true
		}
	}
	return f
}

// phases is the phase rule, applied to device dev's trace in order. An
// alloc entry is in
//  1. the optimizer phase when its stack has a torch/optim frame or it
//     falls inside an Optimizer.step record_function scope;
//  2. backward when its stack shows torch.autograd's backward, the C++
//     engine or a generated backward node;
//  3. the phase of the entry before it when its stack is empty (the
//     engine's thread records no Python frames under stacks="python");
//  4. forward when its stack shows an nn.Module call or torch.nn.functional;
//  5. for the user's own code: other when the next entry with frames is a
//     forward (an input made for it), else the phase before it when that is
//     forward (the loss computed after the model), else other.
//
// Every other entry (frees, segment events) gets the phase of the last
// alloc before it. The result has one phase per trace entry.
func (s *Snapshot) phases(dev int, facts func(StackID) stackFacts) []Phase {
	trace := s.Traces[dev]
	out := make([]Phase, len(trace))
	next := s.nextForward(dev, facts)
	inStep := s.optimizerScopes(dev)
	state := PhaseOther
	for i := range trace {
		e := &trace[i]
		if e.Action != ActionAlloc {
			out[i] = state
			continue
		}
		f := facts(e.Stack)
		switch {
		case f.optimizer || inStep(e):
			state = PhaseOptimizer
		case f.backward:
			state = PhaseBackward
		case f.empty:
		case f.forward:
			state = PhaseForward
		case f.userDirect && next[i]:
			state = PhaseOther
		case state != PhaseForward:
			state = PhaseOther
		}
		out[i] = state
	}
	return out
}

// nextForward reports, for each alloc entry, whether the next alloc entry
// with frames (after it) is a forward one.
func (s *Snapshot) nextForward(dev int, facts func(StackID) stackFacts) []bool {
	trace := s.Traces[dev]
	out := make([]bool, len(trace))
	fwd := false
	for i := len(trace) - 1; i >= 0; i-- {
		e := &trace[i]
		if e.Action != ActionAlloc {
			continue
		}
		out[i] = fwd
		if f := facts(e.Stack); !f.empty {
			fwd = f.forward && !f.optimizer && !f.backward
		}
	}
	return out
}

// optimizerScopes returns a test for entries inside an Optimizer.step
// record_function scope of the device (by time; false without times).
func (s *Snapshot) optimizerScopes(dev int) func(*TraceEntry) bool {
	var spans [][2]int64
	open := map[string]int64{}
	for _, a := range s.Annotations {
		if a.Device != int64(dev) || !strings.HasPrefix(a.Name, "Optimizer.step") {
			continue
		}
		if a.Stage == "START" {
			open[a.Name] = a.TimeUS
		} else if t, ok := open[a.Name]; ok && a.Stage == "END" {
			spans = append(spans, [2]int64{t, a.TimeUS})
			delete(open, a.Name)
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
	k := 0 // entries come in time order: spans ending before them are done
	return func(e *TraceEntry) bool {
		if !e.HasTime {
			return false
		}
		for k < len(spans) && spans[k][1] < e.TimeUS {
			k++
		}
		return k < len(spans) && e.TimeUS >= spans[k][0]
	}
}
