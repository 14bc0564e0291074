package estimate

import (
	"slices"
	"sort"
)

// Gradient checkpointing as a what-if of a trace (the checkpoint lever).
// A checkpointed block keeps, of what its forward made, only what it
// returns: what autograd saved inside it is freed in the forward, where
// the block last used it (the trace's L events), and made again when the
// backward reaches the block, by running its forward anew (temporaries
// too), then freed where the trace freed it, as the block's backward
// consumes it. No size changes; the same allocations' events are moved
// and repeated, so the lever replays the trace with those events.
//
// The blocks are the members of the outermost numbered families of
// modules (model.layers.N, encoder.block.N, blocks.N, layer1.N): what
// Hugging Face's gradient_checkpointing_enable(), timm's
// set_grad_checkpointing() and a loop of torch.utils.checkpoint over a
// ModuleList wrap. The blocks' outputs are known from the trace's O events.

// ckptLever names the lever; ckptChange is its change for --json.
const (
	ckptLever  = "checkpoint"
	ckptChange = "gradient checkpointing of each block (Hugging Face: model.gradient_checkpointing_enable(); " +
		"timm: model.set_grad_checkpointing(); else torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False) in the loop over them)"
)

// numberedBlock: the outermost numbered module a module's name is in
// ("model.layers.3.mlp" is in model.layers.3, of the family model.layers);
// "" when its name has no numbered part after the first.
func numberedBlock(module string) (family, block string) {
	start := 0
	for i := 0; i <= len(module); i++ {
		if i < len(module) && module[i] != '.' {
			continue
		}
		if start > 0 && i > start && allDigits(module[start:i]) {
			return module[:start-1], module[:i]
		}
		start = i + 1
	}
	return "", ""
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// minCheckpointBlocks: a family of fewer blocks is not a stack of layers.
const minCheckpointBlocks = 2

// checkpointFamilies: the outermost numbered families of the modules the
// forward made activations in, with minCheckpointBlocks blocks or more,
// sorted; a family whose blocks the backward already ran again (the
// program checkpoints them: what a recomputation makes carries its module)
// is left out.
func checkpointFamilies(t *Trace) []string {
	blocks := map[string]map[string]bool{}
	recomputed := map[string]bool{}
	type phaseModule struct{ phase, module string }
	seen := map[phaseModule]bool{}
	for i := range t.Allocs {
		a := &t.Allocs[i]
		key := phaseModule{a.Phase, a.Module}
		if a.Module == "" || seen[key] {
			continue
		}
		seen[key] = true
		fam, blk := numberedBlock(a.Module)
		switch {
		case fam == "":
		case a.Phase == "backward":
			recomputed[fam] = true
		case a.Phase == "forward":
			if blocks[fam] == nil {
				blocks[fam] = map[string]bool{}
			}
			blocks[fam][blk] = true
		}
	}
	out := []string{}
	for fam, b := range blocks {
		if len(b) >= minCheckpointBlocks && !recomputed[fam] {
			out = append(out, fam)
		}
	}
	sort.Strings(out)
	return out
}

// ckptRun is one run of a block's forward: its activations and
// temporaries (kind fwd) and autocast's weight copies, in order, between
// the events first and last; the forward it is in ends after event
// fwdEnd.
type ckptRun struct {
	block               string
	first, last, fwdEnd int
	made                []int32
}

// ckptRuns splits the forward's allocations into runs of one block each
// (of the families fams): a run ends at an allocation of another block,
// of no block, or outside the forward.
func (t *Trace) ckptRuns(fams []string) []ckptRun {
	in := map[string]bool{}
	for _, f := range fams {
		in[f] = true
	}
	blockOf := map[string]string{} // module -> its block in fams, or ""
	var runs []ckptRun
	cur := -1
	for i, ev := range t.events {
		if ev.free {
			continue
		}
		a := &t.Allocs[ev.alloc]
		blk := ""
		if a.Phase == "forward" && a.Module != "" {
			b, ok := blockOf[a.Module]
			if !ok {
				if fam, bb := numberedBlock(a.Module); in[fam] {
					b = bb
				}
				blockOf[a.Module] = b
			}
			blk = b
		}
		if blk == "" {
			cur = -1
			continue
		}
		if cur < 0 || runs[cur].block != blk {
			runs = append(runs, ckptRun{block: blk, first: i, last: i})
			cur = len(runs) - 1
		}
		if a.Kind == "fwd" || a.Kind == "autocast" {
			runs[cur].made = append(runs[cur].made, ev.alloc)
			runs[cur].last = i
		}
	}
	for i := range runs {
		runs[i].fwdEnd = t.phaseEnd(runs[i].last)
	}
	return runs
}

// phaseEnd: the last event of the phase event i is in.
func (t *Trace) phaseEnd(i int) int {
	p := sort.Search(len(t.phases), func(p int) bool { return t.phases[p].at > i })
	if p == len(t.phases) {
		return len(t.events) - 1
	}
	return t.phases[p].at - 1
}

// ckptEvents: the edits checkpointing makes: before an event of the
// trace, a recomputation; after one, a block's saved activations freed.
type ckptEvents struct {
	*traceEdits
	again map[int32]bool // a run's, made again by its recomputation (one map for all)
	saved map[int32]bool // every run's saved activations
	// keep: a block's inputs, which the checkpoint holds until the
	// block's backward has consumed what it made again (the event), where
	// the trace freed them before
	keep map[int32]int
}

// eventFacts: each allocation's events (indices; free -1 if never) and,
// for each event, the step of the backward it is in (0: not in one).
type eventFacts struct {
	madeAt, freeAt []int
	bwdStep        []int32
}

func (t *Trace) eventFacts() eventFacts {
	f := eventFacts{madeAt: make([]int, len(t.Allocs)), freeAt: make([]int, len(t.Allocs)),
		bwdStep: make([]int32, len(t.events))}
	var step int32
	p := 0
	for i, ev := range t.events {
		for ; p < len(t.phases) && t.phases[p].at <= i; p++ {
			step = 0
			if t.phases[p].phase == "backward" {
				step = int32(t.phases[p].step)
			}
		}
		f.bwdStep[i] = step
		if ev.free {
			f.freeAt[ev.alloc] = i
		} else {
			f.madeAt[ev.alloc] = i
			f.freeAt[ev.alloc] = -1
		}
	}
	return f
}

// checkpointed is t with each block of fams checkpointed (see the top of
// this file), and the families that had anything to free, sorted (none:
// nil; a frozen encoder's blocks save nothing). It shares t's
// allocations: an allocation freed at its block's end and made again in
// the backward is the same one twice, its two lives apart.
func (t *Trace) checkpointed(fams []string) (*Trace, []string) {
	facts := t.eventFacts()
	ev := ckptEvents{traceEdits: newTraceEdits(), again: map[int32]bool{}, saved: map[int32]bool{}, keep: map[int32]int{}}
	moved := map[string]bool{}
	runs := t.ckptRuns(fams)
	inputs := t.runInputs(runs)
	for i, r := range runs {
		if t.checkpointRun(r, facts, ev, inputs[i]) {
			fam, _ := numberedBlock(r.block)
			moved[fam] = true
		}
	}
	if len(moved) == 0 {
		return nil, nil
	}
	ev.keepInputs(facts.freeAt)
	used := make([]string, 0, len(moved))
	for f := range moved {
		used = append(used, f)
	}
	sort.Strings(used)
	return t.edited(ev.traceEdits), used
}

// checkpointRun adds to ev what checkpointing r's block changes: what r
// made that lives on into the same step's backward (autograd saved it)
// and the block did not return is freed at r's end, and made again with
// r's temporaries, in r's order, just before the first of them is freed.
// What the block returned stays, as the checkpoint keeps it; so does
// what lives on without a backward freeing it (a cache the program keeps).
// False when r had nothing to free.
func (t *Trace) checkpointRun(r ckptRun, facts eventFacts, ev ckptEvents, inputs []int32) bool {
	freeAt := facts.freeAt
	again := ev.again
	clear(again)
	var saved []int32
	recompute := -1
	for _, x := range r.made {
		f := freeAt[x]
		switch {
		case f >= 0 && f <= r.last:
			again[x] = true // a temporary
		case f < 0 || t.returned[x] == r.block || int(facts.bwdStep[f]) != t.Allocs[x].Step:
		default:
			again[x] = true
			saved = append(saved, x)
			if recompute < 0 || f < recompute {
				recompute = f
			}
		}
	}
	if len(saved) == 0 {
		return false
	}
	done := 0 // the block's backward has consumed what it made again
	for _, x := range saved {
		ev.saved[x] = true
		done = max(done, freeAt[x])
	}
	for _, x := range inputs {
		if f := freeAt[x]; f >= 0 && f < done && ev.keep[x] < done {
			ev.keep[x] = done
		}
	}
	for _, x := range saved {
		at := r.last
		switch u, ok := t.lastUse[x]; {
		case t.Allocs[x].Kind == "autocast":
			// a weight's cast is autocast's, cached to the region's end
			// (the forward's, here), where autograd no longer keeps it
			at = r.fwdEnd
		case ok && u < at:
			// its last use in the block: the forward drops it then
			// (freed after the event its allocation is at the earliest)
			at = max(u, facts.madeAt[x])
		}
		ev.after[at] = append(ev.after[at], traceEv{free: true, alloc: x})
	}
	for _, e := range t.events[r.first : r.last+1] {
		if again[e.alloc] && (!e.free || freeAt[e.alloc] <= r.last) {
			ev.before[recompute] = append(ev.before[recompute], e)
		}
	}
	return true
}

// runInputs: for each run, what its block was given (I events): an input
// is the first run of its block to begin at or after it, in the same
// phase (a block that made nothing then has no run).
func (t *Trace) runInputs(runs []ckptRun) [][]int32 {
	out := make([][]int32, len(runs))
	for _, in := range t.inputs {
		end := t.phaseEnd(min(in.at, len(t.events)-1))
		k := sort.Search(len(runs), func(k int) bool { return runs[k].first >= in.at })
		for ; k < len(runs) && runs[k].first <= end; k++ {
			if runs[k].block == in.block {
				out[k] = append(out[k], in.alloc)
				break
			}
		}
	}
	return out
}

// keepInputs frees each input a checkpoint holds where its block's
// backward is done, instead of where the trace freed it; not one a
// block saved itself (its own recomputation moves it), nor one never
// freed. In the order of the allocations, so the replay is the same
// each time.
func (ev ckptEvents) keepInputs(freeAt []int) {
	xs := make([]int32, 0, len(ev.keep))
	for x := range ev.keep {
		if !ev.saved[x] {
			xs = append(xs, x)
		}
	}
	slices.Sort(xs)
	for _, x := range xs {
		ev.drop[freeAt[x]] = true
		ev.after[ev.keep[x]] = append(ev.after[ev.keep[x]], traceEv{free: true, alloc: x})
	}
}

// familyNames: the families as the report says them (model.layers.N).
func familyNames(fams []string) []string {
	out := make([]string, len(fams))
	for i, f := range fams {
		out[i] = f + ".N"
	}
	return out
}

// checkpointWhatIf is t with its blocks checkpointed and the families
// they are in (model.layers.N); nil when it has none to checkpoint.
func checkpointWhatIf(t *Trace) (*Trace, []string) {
	fams := checkpointFamilies(t)
	if len(fams) == 0 {
		return nil, nil
	}
	c, used := t.checkpointed(fams)
	if c == nil {
		return nil, nil
	}
	return c, familyNames(used)
}
