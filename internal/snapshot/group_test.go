package snapshot

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestGroupingDeterministic: every grouping, the breakdown, leaks and diff
// come out byte for byte the same over 20 runs (VIA once changed between
// runs: it was whichever block of a live set, a map, came first).
func TestGroupingDeterministic(t *testing.T) {
	train, accum := loadReal(t, "train_gpt2_bf16.pickle.gz"), loadReal(t, "grad_accum_4.pickle")
	runs := map[string]func() any{}
	for _, by := range Groupings {
		runs["top "+string(by)] = func() any { return TopGroups(train, TopOptions{Depth: 1, GroupBy: by}) }
		runs["top accum "+string(by)] = func() any { return TopGroups(accum, TopOptions{Depth: 2, GroupBy: by}) }
	}
	runs["leaks"] = func() any { return FindLeaks(loadReal(t, "leak_loss_history.pickle"), LeakOptions{}) }
	runs["diff"] = func() any { return Compare(accum, train, 1) }
	for name, run := range runs {
		first, _ := json.Marshal(run())
		for i := 1; i < 20; i++ {
			if again, _ := json.Marshal(run()); string(again) != string(first) {
				t.Fatalf("%s: run %d differs", name, i)
			}
		}
	}
}

// TestLibraryFrameSeparatesGPT2: at the peak of the GPT-2 capture, grouping
// by library frame gives GELU, the attention, the linear layers (Conv1D)
// and the loss rows of their own, where grouping by line gives one row for
// the whole forward.
func TestLibraryFrameSeparatesGPT2(t *testing.T) {
	s := loadReal(t, "train_gpt2_bf16.pickle.gz")
	rows := map[string]int64{}
	for _, r := range TopGroups(s, TopOptions{GroupBy: GroupLibrary, At: &Moment{Kind: MomentEntry, Index: 5000}}).AtPeak[0].Sites {
		rows[r.Key] = r.Bytes
	}
	peak := TopGroups(s, TopOptions{GroupBy: GroupLibrary}).AtPeak[0]
	for _, r := range peak.Sites {
		rows["peak "+r.Key] = r.Bytes
	}
	for _, want := range []string{
		"transformers/activations.py:66 forward",                                 // GELU
		"transformers/integrations/sdpa_attention.py:158 sdpa_attention_forward", // attention
		"transformers/pytorch_utils.py:119 forward",                              // Conv1D, GPT-2's linear layers
		"peak torch/nn/functional.py:3504 cross_entropy",                         // the loss
		"peak transformers/activations.py:66 forward",
		"peak transformers/pytorch_utils.py:119 forward",
	} {
		if rows[want] == 0 {
			t.Errorf("no row %q", want)
		}
	}
	line := TopGroups(s, TopOptions{}).AtPeak[0].Sites[0]
	if line.Key != "capture_torch.py:75 train_with_history" || line.Via != "transformers/activations.py:66 forward" {
		t.Errorf("line row %+v: VIA should be the library frame holding most of it (GELU)", line.Site)
	}
}

// TestCategoriesAtPeak: what the category rule finds at the peak agrees
// with what the captures' training code allocated (fixtures README).
func TestCategoriesAtPeak(t *testing.T) {
	for _, c := range []struct {
		file string
		want map[Category]int64 // exact bytes (requested sizes)
		min  map[Category]int64
		max  map[Category]int64
	}{
		// 3 AdamW steps of 4 micro-batches; the peak is in an optimizer step:
		// the weights, one gradient per weight, exp_avg and exp_avg_sq.
		{"grad_accum_4.pickle", map[Category]int64{CatParameters: 84082728, CatGradients: 84082728,
			CatOptimizerState: 2 * 84082728, CatInputs: 1 << 20}, nil, map[Category]int64{CatActivations: 0}},
		// 30 evaluation batches kept with their graphs: 993 MiB of activations
		// and the 30 inputs (2 MiB each).
		{"eval_leak_no_grad_missing.pickle", map[Category]int64{CatParameters: 84082728, CatInputs: 30 * 2 << 20,
			CatActivations: 1041850368}, nil, map[Category]int64{CatGradients: 0, CatOptimizerState: 0}},
		// the same under inference_mode: 20 KiB per batch left.
		{"eval_inference_mode.pickle", map[Category]int64{CatParameters: 84082728}, nil,
			map[Category]int64{CatActivations: 1 << 20, CatGradients: 0}},
		// GPT-2 at the start of the first backward: the forward's saved
		// tensors, AdamW's two states per fp32 weight, the cross-entropy's
		// backward buffers; no gradient exists yet.
		{"train_gpt2_bf16.pickle.gz", map[Category]int64{CatParameters: 497759232, CatOptimizerState: 2 * 497759232,
			CatAutogradTemporaries: 411705348}, map[Category]int64{CatActivations: 1_300_000_000},
			map[Category]int64{CatGradients: 0}},
	} {
		p := TopGroups(loadReal(t, c.file), TopOptions{GroupBy: GroupCategory}).AtPeak[0]
		got := map[Category]int64{}
		for _, r := range p.Breakdown.Categories {
			got[r.Category] = r.Bytes
		}
		for cat, n := range c.want {
			if got[cat] != n {
				t.Errorf("%s: %s %d bytes, want %d", c.file, cat, got[cat], n)
			}
		}
		for cat, n := range c.min {
			if got[cat] < n {
				t.Errorf("%s: %s %d bytes, want at least %d", c.file, cat, got[cat], n)
			}
		}
		for cat, n := range c.max {
			if got[cat] > n {
				t.Errorf("%s: %s %d bytes, want at most %d", c.file, cat, got[cat], n)
			}
		}
		if p.Breakdown.Total != p.Total {
			t.Errorf("%s: breakdown %d bytes, table %d", c.file, p.Breakdown.Total, p.Total)
		}
	}
}

// stackOf interns frames for generated snapshots: "u:name" a user frame,
// "m:name" a torch/nn/modules/module.py frame, "o:name" torch/optim/adam.py,
// "a:name" torch/autograd/__init__.py, "l:name" torch/nn/modules/linear.py.
func genStack(s *Snapshot, spec ...string) StackID {
	dirs := map[string]string{"u": "/home/u/train.py", "m": "/x/site-packages/torch/nn/modules/module.py",
		"o": "/x/site-packages/torch/optim/adam.py", "a": "/x/site-packages/torch/autograd/__init__.py",
		"l": "/x/site-packages/torch/nn/modules/linear.py"}
	var ids []FrameID
	for _, f := range spec {
		kind, name, _ := strings.Cut(f, ":")
		s.Frames = append(s.Frames, Frame{Name: name, Filename: dirs[kind], Line: 1})
		ids = append(ids, FrameID(len(s.Frames)-1))
	}
	s.Stacks = append(s.Stacks, ids)
	return StackID(len(s.Stacks) - 1)
}

// TestCategoryRulesGenerated: one generated training step, each allocation
// made by a known rule.
func TestCategoryRulesGenerated(t *testing.T) {
	s := &Snapshot{Stacks: [][]FrameID{nil}}
	param := genStack(s, "m:<lambda>", "m:_apply", "u:main")
	input := genStack(s, "u:main")
	fwd := genStack(s, "l:forward", "m:_call_impl", "u:main")
	grads := genStack(s, "a:_make_grads", "a:backward", "u:main")
	state := genStack(s, "o:_init_group", "o:step", "u:main")
	otmp := genStack(s, "o:_multi_tensor_adam", "o:step", "u:main")
	a := func(addr uint64, size int64, st StackID) TraceEntry {
		return TraceEntry{Action: ActionAlloc, Addr: addr, Size: size, Stack: st}
	}
	f := func(addr uint64, size int64) TraceEntry {
		return TraceEntry{Action: ActionFreeCompleted, Addr: addr, Size: size}
	}
	s.Traces = [][]TraceEntry{{
		a(1, 4096, param),       // 0 parameters
		a(2, 100, input),        // 1 input, right before the forward
		a(3, 800, fwd),          // 2 activation saved for backward
		a(4, 50, fwd), f(4, 50), // 3,4 forward temporary
		a(5, 4, grads),                     // 5 backward starts
		a(6, 4096, 0),                      // 6 gradient (empty stack, parameter-sized)
		a(7, 300, 0), f(7, 300), f(3, 800), // 7-9 autograd temporary; the activation freed
		f(5, 4),                      // 10
		a(8, 4096, state),            // 11 optimizer state
		a(9, 4096, otmp), f(9, 4096), // 12,13 optimizer temporary
	}}
	c := NewClassifier(s, 0)
	for _, w := range []struct {
		index int
		cat   Category
		rule  string
		phase Phase
	}{
		{0, CatParameters, "params", PhaseOther}, {1, CatInputs, "input", PhaseOther},
		{2, CatActivations, "act-saved", PhaseForward}, {3, CatOther, "fwd-temp", PhaseForward},
		{6, CatGradients, "grad-kept", PhaseBackward}, {7, CatAutogradTemporaries, "grad-temp", PhaseBackward},
		{11, CatOptimizerState, "optim-init", PhaseOptimizer}, {12, CatOther, "optim-temp", PhaseOptimizer},
	} {
		v := c.Of(w.index, s.Traces[0][w.index].Stack)
		if v.Category != w.cat || v.Rule != w.rule || v.Phase != w.phase {
			t.Errorf("entry %d: %+v, want %s by %s in %s", w.index, v, w.cat, w.rule, w.phase)
		}
	}
}

func TestParseMoment(t *testing.T) {
	for in, want := range map[string]Moment{
		"peak": {Kind: MomentPeak}, "entry 12": {Kind: MomentEntry, Index: 12}, "#3": {Kind: MomentEntry, Index: 3},
		"1.5s": {Kind: MomentTime, Elapsed: 1500_000_000}, "+250ms": {Kind: MomentTime, Elapsed: 250_000_000},
	} {
		if got, err := ParseMoment(in); err != nil || got != want {
			t.Errorf("ParseMoment(%q) = %+v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"entry -1", "soon", "-2s"} {
		if _, err := ParseMoment(bad); err == nil {
			t.Errorf("ParseMoment(%q) accepted", bad)
		}
	}
	s := loadReal(t, "train_gpt2_bf16.pickle.gz")
	if l := s.LevelAt(0, Moment{Kind: MomentEntry, Index: 5780}); l != s.Peak(0) {
		t.Errorf("entry 5780 %+v, peak %+v", l, s.Peak(0))
	}
	if l := s.LevelAt(0, Moment{Kind: MomentTime, Elapsed: 1 << 62}); l.Index != len(s.Traces[0])-1 {
		t.Errorf("a time past the end: %+v", l)
	}
}
